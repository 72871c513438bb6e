import {
  CallId,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  type GenerateOptions,
  type Message,
  type ToolSchema,
} from '@deepseek-ai/dsh-llm'
import { FakeProvider } from '@deepseek-ai/dsh-testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AnthropicAdapter, type ProviderConfig } from '../src'
import { collect, stream, wire } from './support/wire'

const apiKey = 'sk-ant-body-test-0123456789'
let server: FakeProvider

beforeEach(async () => {
  server = await FakeProvider.start()
})

afterEach(async () => {
  await server.stop()
})

const claude = { kind: 'model', provider: 'claude', model: 'claude-test' } as const
const other = { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' } as const
const ok = () => stream([wire.start(), wire.text(0), wire.textDelta(0, 'ok'), wire.stop(0), wire.delta('end_turn'), wire.end()])

const tools: ToolSchema[] = [
  { name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'list_dir', description: 'List a directory.', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
]

async function send(options: Partial<GenerateOptions>, provider: ProviderConfig = {}): Promise<unknown> {
  server.handle(ok())
  const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey, ...provider })
  await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages: [createUserMessage('hi')], ...options }))
  return server.requests.at(-1)!.body
}

const E = { type: 'ephemeral' }

describe('request mapping', () => {
  it('posts to <baseUrl>/v1/messages with x-api-key, anthropic-version, JSON in and an event stream out', async () => {
    await send({}, { headers: { 'anthropic-beta': 'test-beta' } })
    const request = server.requests[0]!
    expect({ method: request.method, url: request.url }).toEqual({ method: 'POST', url: '/v1/messages' })
    expect(request.headers).toMatchObject({
      'x-api-key': apiKey,
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'test-beta',
      'content-type': 'application/json',
      accept: 'text/event-stream',
    })
    expect(request.headers.authorization).toBeUndefined()
  })

  it('maps every block: images, tool results with images and errors, thinking replayed with its signature, redacted thinking, empty text left out, roles merged', async () => {
    const messages: Message[] = [
      createUserMessage([
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      ]),
      createAssistantMessage(
        [
          { type: 'reasoning', text: 'Look closer.', signature: 'sig-1' },
          { type: 'redacted-reasoning', data: 'ENCRYPTED' },
          { type: 'text', text: '' },
          { type: 'text', text: 'Let me zoom.' },
          { type: 'tool-call', id: CallId('toolu_1'), name: 'zoom', arguments: '{"x":1}' },
          { type: 'tool-call', id: CallId('toolu_2'), name: 'crop', arguments: '{"x":' },
        ],
        { source: claude },
      ),
      createToolResultMessage({
        callId: CallId('toolu_1'),
        content: [
          { type: 'text', text: 'zoomed' },
          { type: 'image', mediaType: 'image/jpeg', data: '/9j/4AAQ' },
        ],
      }),
      createToolResultMessage({ callId: CallId('toolu_2'), content: 'bad arguments', isError: true }),
      createUserMessage('Also: be brief.'),
    ]
    const body = await send({ messages, system: 'You are dsh.', maxTokens: 1024, temperature: 0.5 }, { cacheBreakpoints: false })
    expect(body).toEqual({
      model: 'claude-test',
      max_tokens: 1024,
      system: [{ type: 'text', text: 'You are dsh.' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Look closer.', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'ENCRYPTED' },
            { type: 'text', text: 'Let me zoom.' },
            { type: 'tool_use', id: 'toolu_1', name: 'zoom', input: { x: 1 } },
            { type: 'tool_use', id: 'toolu_2', name: 'crop', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [
                { type: 'text', text: 'zoomed' },
                { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
              ],
            },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'bad arguments' }], is_error: true },
            { type: 'text', text: 'Also: be brief.' },
          ],
        },
      ],
      temperature: 0.5,
      stream: true,
    })
  })

  it('thinking and redacted thinking of another route (or unsigned thinking) are not sent', async () => {
    const turn = (source: typeof claude | typeof other, signature?: string): Message[] => [
      createUserMessage('q'),
      createAssistantMessage(
        [
          signature ? { type: 'reasoning', text: 'hmm', signature } : { type: 'reasoning', text: 'hmm' },
          { type: 'redacted-reasoning', data: 'ENCRYPTED' },
          { type: 'text', text: 'a' },
        ],
        { source },
      ),
      createUserMessage('next'),
    ]
    const assistant = (body: unknown) => (body as { messages: unknown[] }).messages[1]
    expect(assistant(await send({ messages: turn(other, 'sig') }, { cacheBreakpoints: false }))).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'a' }] })
    expect(assistant(await send({ messages: turn(claude) }, { cacheBreakpoints: false }))).toEqual({
      role: 'assistant',
      content: [
        { type: 'redacted_thinking', data: 'ENCRYPTED' },
        { type: 'text', text: 'a' },
      ],
    })
  })

  it('a block the API cannot take is refused with BAD_REQUEST naming it, and nothing is sent', async () => {
    const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey })
    const messages = [createUserMessage([{ type: 'reasoning', text: 'not here' }])]
    expect(await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages }))).toEqual([
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: { code: 'BAD_REQUEST', message: 'messages[0].content[0] is a "reasoning" block in a user message; the Anthropic adapter sends only text, image and tool-result blocks there' },
        },
      },
    ])
    expect(server.requests).toEqual([])
  })

  it('the effort reaches the API as the model says: adaptive thinking with output_config, effort alone, or a thinking budget under max_tokens', async () => {
    const models = {
      adaptive: { reasoningEfforts: ['low', 'high'], thinking: 'adaptive' as const },
      effort: { reasoningEfforts: ['high'], thinking: 'effort' as const },
      budget: { reasoningEfforts: ['low', 'high'], thinking: 'budget' as const, thinkingBudgets: { low: 2048, high: 50_000 } },
    }
    const fields = async (model: string, effort: string | undefined, maxTokens = 32_000) => {
      const body = (await send({ model, maxTokens, ...(effort ? { reasoningEffort: effort } : {}) }, { models })) as Record<string, unknown>
      return { thinking: body.thinking, output_config: body.output_config }
    }
    expect([
      await fields('adaptive', 'low'),
      await fields('adaptive', undefined),
      await fields('effort', 'high'),
      await fields('budget', 'low'),
      await fields('budget', 'high'),
      await fields('budget', undefined),
      await fields('budget', 'low', 1024),
    ]).toEqual([
      { thinking: { type: 'adaptive' }, output_config: { effort: 'low' } },
      { thinking: { type: 'adaptive' }, output_config: undefined },
      { thinking: undefined, output_config: { effort: 'high' } },
      { thinking: { type: 'enabled', budget_tokens: 2048 }, output_config: undefined },
      { thinking: { type: 'enabled', budget_tokens: 31_999 }, output_config: undefined },
      { thinking: undefined, output_config: undefined },
      { thinking: undefined, output_config: undefined },
    ])
  })

  it('max_tokens: the call value, else the provider default, clamped to the model limit; extra body fields last (model over provider)', async () => {
    const models = { small: { maxOutputTokens: 4096, extraBody: { metadata: { user_id: 'model' } } } }
    const provider = { defaultMaxTokens: 8000, models, extraBody: { metadata: { user_id: 'provider' }, top_k: 5 } }
    const pick = (body: unknown) => {
      const b = body as Record<string, unknown>
      return { max_tokens: b.max_tokens, metadata: b.metadata, top_k: b.top_k }
    }
    expect([pick(await send({}, provider)), pick(await send({ model: 'small' }, provider)), pick(await send({ model: 'small', maxTokens: 100 }, provider))]).toEqual([
      { max_tokens: 8000, metadata: { user_id: 'provider' }, top_k: 5 },
      { max_tokens: 4096, metadata: { user_id: 'model' }, top_k: 5 },
      { max_tokens: 100, metadata: { user_id: 'model' }, top_k: 5 },
    ])
  })
})

describe('cache breakpoints (at most four: tools, system, the previous step and this one)', () => {
  it('three steps of a tool turn: each request marks its own end and the end of the previous request, whose prefix is byte-identical', async () => {
    const system = 'You are dsh.'
    const call1 = { type: 'tool-call', id: CallId('toolu_1'), name: 'read_file', arguments: '{"path":"a"}' } as const
    const call2 = { type: 'tool-call', id: CallId('toolu_2'), name: 'list_dir', arguments: '{"path":"."}' } as const
    const step1: Message[] = [createUserMessage('Summarize a.')]
    const step2: Message[] = [
      ...step1,
      createAssistantMessage([{ type: 'reasoning', text: 'Read it.', signature: 's1' }, call1], { source: claude }),
      createToolResultMessage({ callId: CallId('toolu_1'), content: 'A' }),
    ]
    const step3: Message[] = [
      ...step2,
      createAssistantMessage([{ type: 'text', text: 'And the dir.' }, call2], { source: claude }),
      createToolResultMessage({ callId: CallId('toolu_2'), content: 'a b' }),
    ]
    const bodies = []
    for (const messages of [step1, step2, step3]) bodies.push(await send({ messages, system, tools, maxTokens: 1000 }))
    const head = {
      model: 'claude-test',
      max_tokens: 1000,
      system: [{ type: 'text', text: system, cache_control: E }],
      tools: [
        { name: 'read_file', description: 'Read a file.', input_schema: tools[0]!.parameters },
        { name: 'list_dir', description: 'List a directory.', input_schema: tools[1]!.parameters, cache_control: E },
      ],
    }
    const user1 = { role: 'user', content: [{ type: 'text', text: 'Summarize a.' }] }
    const assistant1 = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Read it.', signature: 's1' },
        { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a' } },
      ],
    }
    const result1 = { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'A' }] }
    const assistant2 = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'And the dir.' },
        { type: 'tool_use', id: 'toolu_2', name: 'list_dir', input: { path: '.' } },
      ],
    }
    const result2 = { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'a b' }] }
    const marked = <T extends object>(block: T) => ({ ...block, cache_control: E })
    expect(bodies).toEqual([
      { ...head, messages: [{ role: 'user', content: [marked(user1.content[0]!)] }], stream: true },
      { ...head, messages: [{ role: 'user', content: [marked(user1.content[0]!)] }, assistant1, { role: 'user', content: [marked(result1)] }], stream: true },
      { ...head, messages: [user1, assistant1, { role: 'user', content: [marked(result1)] }, assistant2, { role: 'user', content: [marked(result2)] }], stream: true },
    ])
    // At most four breakpoints in every request.
    for (const request of server.requests) expect(request.raw.split('"cache_control"').length - 1).toBeLessThanOrEqual(4)
  })

  it('a three-turn conversation: each request marks its last message and the end of the previous request, as whole bodies', async () => {
    const u1 = createUserMessage('Hi.')
    const a1 = createAssistantMessage('Hello.', { source: claude })
    const u2 = createUserMessage('What is 2+2?')
    const a2 = createAssistantMessage([{ type: 'text', text: '4.' }], { source: claude })
    const u3 = createUserMessage('Thanks.')
    const bodies = []
    for (const messages of [[u1], [u1, a1, u2], [u1, a1, u2, a2, u3]]) bodies.push(await send({ messages, system: 'Be brief.', maxTokens: 100 }))
    const user = (text: string, mark = false) => ({ role: 'user', content: [mark ? { type: 'text', text, cache_control: E } : { type: 'text', text }] })
    const assistant = (text: string) => ({ role: 'assistant', content: [{ type: 'text', text }] })
    const head = { model: 'claude-test', max_tokens: 100, system: [{ type: 'text', text: 'Be brief.', cache_control: E }] }
    expect(bodies).toEqual([
      { ...head, messages: [user('Hi.', true)], stream: true },
      { ...head, messages: [user('Hi.', true), assistant('Hello.'), user('What is 2+2?', true)], stream: true },
      { ...head, messages: [user('Hi.'), assistant('Hello.'), user('What is 2+2?', true), assistant('4.'), user('Thanks.', true)], stream: true },
    ])
  })

  it('the same history always gives the same bytes', async () => {
    const messages = [createUserMessage('a'), createAssistantMessage('b', { source: claude }), createUserMessage('c')]
    await send({ messages, tools, system: 's' })
    await send({ messages: [...messages], tools: [...tools], system: 's' })
    expect(server.requests[1]!.raw).toBe(server.requests[0]!.raw)
  })
})
