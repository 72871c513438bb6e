import { CallId, createAssistantMessage, createToolResultMessage, createUserMessage, deepFreeze, type Message } from '@deepseek-ai/dsh-llm'
import { FakeProvider, reply, type Handler } from '@deepseek-ai/dsh-testkit'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { AnthropicAdapter } from '../src'
import { collect, stream, wire } from './support/wire'

const source = { kind: 'model', provider: 'claude', model: 'claude-test' } as const
let server: FakeProvider

beforeEach(async () => {
  server = await FakeProvider.start()
})

afterEach(async () => {
  await server.stop()
})

type Block = { type: string; text?: string; content?: Block[] }

/**
 * Refuses like the Messages API a request holding a text block that is empty
 * or only whitespace, anywhere (its 400 `messages: text content blocks must
 * contain non-whitespace text`); anything else streams "ok".
 */
const judgesText: Handler = async (request, res, closed) => {
  const blank = (block: Block): boolean => (block.type === 'text' && !/\S/.test(block.text ?? '')) || (block.content ?? []).some(blank)
  const messages = (request.body as { messages: Array<{ content: Block[] }> }).messages
  if (messages.some((m) => m.content.some(blank))) {
    return reply(400, { type: 'error', error: { type: 'invalid_request_error', message: 'messages: text content blocks must contain non-whitespace text' } })(request, res, closed)
  }
  return stream([wire.start(), wire.text(0), wire.textDelta(0, 'ok'), wire.stop(0), wire.delta('end_turn'), wire.end()])(request, res, closed)
}

it('whitespace-only text (the model\'s "\\n\\n" before a tool call, a command that printed a blank line, a user\'s stray space) is left out, so the session goes on', async () => {
  const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey: 'sk-ant-blank-0123456789', cacheBreakpoints: false })
  const history: Message[] = deepFreeze([
    createUserMessage('Run the build.'),
    createAssistantMessage(
      [
        { type: 'text', text: '\n\n' },
        { type: 'tool-call', id: CallId('toolu_1'), name: 'shell', arguments: '{"command":"make"}' },
      ],
      { source },
    ),
    createToolResultMessage({ callId: CallId('toolu_1'), content: '\n' }),
    createUserMessage([
      { type: 'text', text: ' ' },
      { type: 'text', text: 'And now?' },
    ]),
  ])
  server.handle(judgesText)
  const chunks = await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages: history }))
  expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
  expect((server.requests[0]!.body as { messages: unknown }).messages).toEqual([
    { role: 'user', content: [{ type: 'text', text: 'Run the build.' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'shell', input: { command: 'make' } }] },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1' },
        { type: 'text', text: 'And now?' },
      ],
    },
  ])
})
