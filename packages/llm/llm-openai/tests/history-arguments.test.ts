import { CallId, createAssistantMessage, createToolResultMessage, createUserMessage, deepFreeze, type Message } from '@deepseek-ai/dsh-llm'
import { FakeProvider, openAiChunk as chunk, reply, sse, type Handler } from '@deepseek-ai/dsh-testkit'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { OpenAiAdapter } from '../src'
import { collect } from './support/collect'

const source = { kind: 'model', provider: 'vllm', model: 'qwen' } as const
let server: FakeProvider

beforeEach(async () => {
  server = await FakeProvider.start()
})

afterEach(async () => {
  await server.stop()
})

type Call = { id: string; function: { name: string; arguments: string } }

/**
 * Reads the history as vLLM's chat preprocessing (and Moonshot's API) do:
 * every earlier tool call's `arguments` must be the text of a JSON object, or
 * the request is refused with a 400 quoting the JSON error; anything else
 * streams "ok".
 */
const parsesArguments: Handler = async (request, res, closed) => {
  const messages = (request.body as { messages: Array<{ tool_calls?: Call[] }> }).messages
  for (const call of messages.flatMap((m) => m.tool_calls ?? [])) {
    let parsed: unknown
    try {
      parsed = JSON.parse(call.function.arguments)
    } catch (error) {
      return reply(400, { error: { message: (error as Error).message, type: 'BadRequestError', param: null, code: 400 } })(request, res, closed)
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return reply(400, { error: { message: 'arguments must be a valid JSON object string', type: 'BadRequestError', param: null, code: 400 } })(request, res, closed)
    }
  }
  return sse([chunk({ role: 'assistant', content: 'ok' }), chunk({}, 'stop')])(request, res, closed)
}

it('tool calls whose arguments are not a JSON object (cut by max-tokens, broken, empty) go back as {}, so a server that parses the history takes the session\'s next request; valid arguments go byte for byte', async () => {
  const adapter = new OpenAiAdapter({ name: 'vllm', baseUrl: server.url, apiKey: 'sk-vllm-0123456789abcdef' })
  const calls = [
    { type: 'tool-call', id: CallId('call_cut'), name: 'write_file', arguments: '{"path":"a.txt","content":"hel' },
    { type: 'tool-call', id: CallId('call_empty'), name: 'list_dir', arguments: '' },
    { type: 'tool-call', id: CallId('call_array'), name: 'list_dir', arguments: '[1]' },
    { type: 'tool-call', id: CallId('call_ok'), name: 'read_file', arguments: '{ "path" : "b.txt" }' },
  ] as const
  const history: Message[] = deepFreeze([
    createUserMessage('Write a.txt, then read b.txt.'),
    createAssistantMessage([...calls], { source }),
    ...calls.map((call) => createToolResultMessage({ callId: call.id, content: 'the arguments were not a JSON object', isError: true })),
    createUserMessage('Try again.'),
  ])
  server.handle(parsesArguments)
  const chunks = await collect(adapter.stream({ provider: 'vllm', model: 'qwen', messages: history }))
  expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
  const sent = (server.requests[0]!.body as { messages: Array<{ tool_calls?: Call[] }> }).messages[1]!.tool_calls!
  expect(sent.map((call) => [call.id, call.function.arguments])).toEqual([
    ['call_cut', '{}'],
    ['call_empty', '{}'],
    ['call_array', '{}'],
    ['call_ok', '{ "path" : "b.txt" }'],
  ])
})

it('a session switched to a DeepSeek thinking model from one that did not think (deepseek-chat) goes on: an earlier answer without reasoning goes back with an empty reasoning_content', async () => {
  const adapter = new OpenAiAdapter({ preset: 'deepseek', baseUrl: server.url, apiKey: 'sk-deepseek-0123456789abcdef' })
  const chat = { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' } as const
  const history: Message[] = deepFreeze([
    createUserMessage('List the files.'),
    createAssistantMessage([{ type: 'tool-call', id: CallId('call_1'), name: 'list_dir', arguments: '{}' }], { source: chat }),
    createToolResultMessage({ callId: CallId('call_1'), content: 'a.txt' }),
    createAssistantMessage([{ type: 'text', text: 'One file: a.txt.' }], { source: chat }),
    createUserMessage('Now think hard about it.'),
  ])
  /** Refuses like DeepSeek's thinking mode an assistant message without `reasoning_content` (its wording); else streams "ok". */
  const thinkingMode: Handler = async (request, res, closed) => {
    const messages = (request.body as { messages: Array<{ role: string; reasoning_content?: unknown }> }).messages
    const at = messages.findIndex((m) => m.role === 'assistant' && typeof m.reasoning_content !== 'string')
    if (at >= 0) {
      const message = `Missing \`reasoning_content\` field in the assistant message at message index ${at}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls`
      return reply(400, { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } })(request, res, closed)
    }
    return sse([chunk({ role: 'assistant', content: 'ok' }), chunk({}, 'stop')])(request, res, closed)
  }
  server.handle(thinkingMode)
  const chunks = await collect(adapter.stream({ provider: 'deepseek', model: 'deepseek-v4-flash', messages: history }))
  expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
  const sent = (server.requests[0]!.body as { messages: Array<Record<string, unknown>> }).messages.filter((m) => m.role === 'assistant')
  expect(sent).toEqual([
    { role: 'assistant', content: null, reasoning_content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'list_dir', arguments: '{}' } }] },
    { role: 'assistant', content: 'One file: a.txt.', reasoning_content: '' },
  ])
})
