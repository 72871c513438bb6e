import {
  CallId,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  type GenerateOptions,
  type Message,
  type ToolSchema,
} from '@deepseek-ai/dsh-llm'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { OpenAiAdapter, type ProviderConfig } from '../src'
import { collect } from './support/collect'
import { FakeProvider, openAiChunk as chunk, sse } from '@deepseek-ai/dsh-testkit'

const key = 'sk-body-test-0123456789'
let server: FakeProvider

beforeEach(async () => {
  server = await FakeProvider.start()
})

afterEach(async () => {
  await server.stop()
})

const model = { kind: 'model', provider: 'fake', model: 'test-model' } as const

const tools: ToolSchema[] = [
  {
    name: 'read_file',
    description: 'Read a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
]

/** A conversation with every block kind the adapter maps. */
const conversation: Message[] = [
  createUserMessage('Read a.txt'),
  createAssistantMessage(
    [
      { type: 'reasoning', text: 'I should read it.', signature: 'opaque-sig' },
      { type: 'text', text: 'Reading.' },
      { type: 'tool-call', id: CallId('call_1'), name: 'read_file', arguments: '{"path":"a.txt"}' },
      { type: 'tool-call', id: CallId('call_2'), name: 'list_dir', arguments: '{"path":"."}' },
    ],
    { source: model },
  ),
  createToolResultMessage({ callId: CallId('call_1'), content: 'hello world' }),
  createToolResultMessage({
    callId: CallId('call_2'),
    content: [
      { type: 'text', text: 'a.txt' },
      { type: 'image', mediaType: 'image/png', data: 'iVBORw0K' },
    ],
    isError: false,
  }),
  createUserMessage([
    { type: 'text', text: 'Context: cwd is /tmp' },
    { type: 'text', text: 'What now?' },
  ]),
  createAssistantMessage('Done.', { source: model }),
  createUserMessage([
    { type: 'text', text: 'And this picture?' },
    { type: 'image', mediaType: 'image/jpeg', data: '/9j/4AAQ' },
  ]),
]

async function send(provider: ProviderConfig, options: Partial<GenerateOptions> = {}): Promise<void> {
  server.handle(sse([chunk({ content: 'ok' }, 'stop')]))
  const adapter = new OpenAiAdapter({ name: 'fake', baseUrl: server.url, apiKey: key, ...provider })
  await collect(adapter.stream({ provider: 'fake', model: 'test-model', messages: conversation, ...options }))
}

describe('request mapping', () => {
  it('sends the exact chat-completions body: system, messages, tools, knobs, streaming usage', async () => {
    await send({}, { system: 'You are dsh.', tools, maxTokens: 1024, temperature: 0.2 })
    expect(server.requests.map((r) => ({ method: r.method, url: r.url }))).toEqual([{ method: 'POST', url: '/v1/chat/completions' }])
    expect(server.requests[0]!.body).toEqual({
      model: 'test-model',
      messages: [
        { role: 'system', content: 'You are dsh.' },
        { role: 'user', content: 'Read a.txt' },
        {
          role: 'assistant',
          content: 'Reading.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
            { id: 'call_2', type: 'function', function: { name: 'list_dir', arguments: '{"path":"."}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'hello world' },
        { role: 'tool', tool_call_id: 'call_2', content: 'a.txt' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Images returned by tool call call_2:' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } },
            { type: 'text', text: 'Context: cwd is /tmp' },
            { type: 'text', text: 'What now?' },
          ],
        },
        { role: 'assistant', content: 'Done.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'And this picture?' },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
          ],
        },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'read_file',
            description: 'Read a file.',
            parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          },
        },
      ],
      max_tokens: 1024,
      temperature: 0.2,
      stream: true,
      stream_options: { include_usage: true },
    })
  })

  it('sends the headers: bearer key, JSON in, event stream out, configured extras', async () => {
    await send({ headers: { 'OpenAI-Organization': 'org-test' } })
    const { headers } = server.requests[0]!
    expect({
      authorization: headers.authorization,
      'content-type': headers['content-type'],
      accept: headers.accept,
      'openai-organization': headers['openai-organization'],
    }).toEqual({
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'openai-organization': 'org-test',
    })
  })

  it('sends no Authorization header for a provider without a key (local servers)', async () => {
    server.handle(sse([chunk({ content: 'ok' }, 'stop')]))
    const local = new OpenAiAdapter({ name: 'ollama', baseUrl: server.url })
    await collect(local.stream({ provider: 'ollama', model: 'llama3', messages: [createUserMessage('hi')] }))
    expect(server.requests[0]!.headers.authorization).toBeUndefined()
  })

  it('is byte-identical for the same call whatever the key order of the options', async () => {
    const a: GenerateOptions = {
      provider: 'fake',
      model: 'test-model',
      system: 'S',
      tools,
      messages: conversation,
      maxTokens: 10,
      temperature: 0,
      reasoningEffort: 'high',
    }
    const b: GenerateOptions = {
      reasoningEffort: 'high',
      temperature: 0,
      maxTokens: 10,
      messages: conversation,
      tools,
      system: 'S',
      model: 'test-model',
      provider: 'fake',
    }
    server.handle(sse([chunk({}, 'stop')]), sse([chunk({}, 'stop')]))
    const adapter = new OpenAiAdapter({ name: 'fake', baseUrl: server.url, apiKey: key })
    await collect(adapter.stream(a))
    await collect(adapter.stream(b))
    expect(server.requests[1]!.raw).toBe(server.requests[0]!.raw)
    expect(Object.keys(server.requests[0]!.body as object)).toEqual([
      'model',
      'messages',
      'tools',
      'reasoning_effort',
      'max_tokens',
      'temperature',
      'stream',
      'stream_options',
    ])
  })

  it('drops reasoning by default and replays it as reasoning_content for models configured to (DeepSeek thinking mode)', async () => {
    await send({})
    await send({ models: { 'test-model': { replayReasoning: true } } })
    const assistant = (i: number) => (server.requests[i]!.body as { messages: unknown[] }).messages[1]
    expect(assistant(0)).toEqual({
      role: 'assistant',
      content: 'Reading.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
        { id: 'call_2', type: 'function', function: { name: 'list_dir', arguments: '{"path":"."}' } },
      ],
    })
    expect(assistant(1)).toEqual({
      role: 'assistant',
      content: 'Reading.',
      reasoning_content: 'I should read it.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
        { id: 'call_2', type: 'function', function: { name: 'list_dir', arguments: '{"path":"."}' } },
      ],
    })
    expect(server.requests[1]!.raw).not.toContain('opaque-sig')
  })

  it('a redacted-reasoning block (encrypted reasoning of another provider) is dropped: the bytes sent equal those of the conversation without it', async () => {
    const redacted = { type: 'redacted-reasoning', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP+=' } as const
    const withRedacted = conversation.map((message) =>
      message.role === 'assistant' ? { ...message, content: [redacted, ...message.content, redacted] } : message,
    )
    for (const provider of [{}, { models: { 'test-model': { replayReasoning: true } } }] satisfies ProviderConfig[]) {
      server.requests.length = 0
      await send(provider, { system: 'You are dsh.', tools })
      await send(provider, { system: 'You are dsh.', tools, messages: withRedacted })
      expect(server.requests).toHaveLength(2)
      expect(server.requests[1]!.raw).toBe(server.requests[0]!.raw)
      expect(server.requests[1]!.raw).not.toContain('EmwKAhgB')
    }
  })

  it('sends content null for an assistant message that only calls tools, and a tool result with only an image gets a placeholder text', async () => {
    const messages: Message[] = [
      createUserMessage('Screenshot please'),
      createAssistantMessage([{ type: 'tool-call', id: CallId('call_s'), name: 'screenshot', arguments: '{}' }], { source: model }),
      createToolResultMessage({ callId: CallId('call_s'), content: [{ type: 'image', mediaType: 'image/png', data: 'AAAA' }] }),
    ]
    await send({}, { messages })
    expect((server.requests[0]!.body as { messages: unknown[] }).messages).toEqual([
      { role: 'user', content: 'Screenshot please' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_s', type: 'function', function: { name: 'screenshot', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_s', content: '[1 image(s) attached in the next message]' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images returned by tool call call_s:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
    ])
  })

  it('writes max_completion_tokens when configured, omits stream_options when streamUsage is off, and appends extra body fields (model over provider)', async () => {
    await send(
      {
        maxTokensParam: 'max_completion_tokens',
        streamUsage: false,
        extraBody: { user: 'dsh', thinking: { type: 'enabled' } },
        models: { 'test-model': { extraBody: { thinking: { type: 'disabled' } } } },
      },
      { messages: [createUserMessage('hi')], maxTokens: 64 },
    )
    expect(server.requests[0]!.body).toEqual({
      model: 'test-model',
      messages: [{ role: 'user', content: 'hi' }],
      max_completion_tokens: 64,
      stream: true,
      user: 'dsh',
      thinking: { type: 'disabled' },
    })
  })

  it('uses the default model when the call names none', async () => {
    await send({ defaultModel: 'fallback-model' }, { model: '', messages: [createUserMessage('hi')] })
    expect((server.requests[0]!.body as { model: string }).model).toBe('fallback-model')
  })
})
