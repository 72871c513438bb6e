import { CallId, createAssistantMessage, createToolResultMessage, createUserMessage, deepFreeze, type Message } from '@deepseek-ai/dsh-llm'
import { FakeProvider, reply, type Handler } from '@deepseek-ai/dsh-testkit'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { AnthropicAdapter } from '../src'
import { collect, stream, wire } from './support/wire'

let server: FakeProvider

beforeEach(async () => {
  server = await FakeProvider.start()
})

afterEach(async () => {
  await server.stop()
})

type Block = { type: string; id?: string; tool_use_id?: string }
const ID = /^[a-zA-Z0-9_-]+$/

/**
 * Refuses like the Messages API a `tool_use` id (or a `tool_result`'s
 * `tool_use_id`) outside `^[a-zA-Z0-9_-]+$`, a `tool_use` id used twice in
 * the request, with the API's wording, and a result that answers no call of
 * the message before it; anything else streams "ok".
 */
const judgesIds: Handler = async (request, res, closed) => {
  const messages = (request.body as { messages: Array<{ content: Block[] }> }).messages
  const refuse = (message: string) => reply(400, { type: 'error', error: { type: 'invalid_request_error', message } })(request, res, closed)
  const seen = new Set<string>()
  for (const [m, message] of messages.entries()) {
    for (const [b, block] of message.content.entries()) {
      if (block.type === 'tool_use' && !ID.test(block.id!)) return refuse(`messages.${m}.content.${b}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`)
      if (block.type === 'tool_use' && seen.has(block.id!)) return refuse(`messages.${m}.content.${b}: \`tool_use\` ids must be unique`)
      if (block.type === 'tool_use') seen.add(block.id!)
      if (block.type === 'tool_result') {
        if (!ID.test(block.tool_use_id!)) return refuse(`messages.${m}.content.${b}.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'`)
        if (!messages[m - 1]!.content.some((call) => call.type === 'tool_use' && call.id === block.tool_use_id)) {
          return refuse(`messages.${m}.content.${b}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}`)
        }
      }
    }
  }
  return stream([wire.start(), wire.text(0), wire.textDelta(0, 'ok'), wire.stop(0), wire.delta('end_turn'), wire.end()])(request, res, closed)
}

it("a session switched to Claude from a model whose tool call ids the API refuses (Kimi's functions.read_file:0) goes on: those ids are mapped to valid ones, the same for a call and its result", async () => {
  const kimi = { kind: 'model', provider: 'moonshot', model: 'kimi-k2' } as const
  const ids = ['functions.read_file:0', 'functions.read_file:1', 'call_a|fc_b', 'toolu_01ok']
  const history: Message[] = deepFreeze([
    createUserMessage('Read a.txt and b.txt.'),
    createAssistantMessage(
      ids.map((id, i) => ({ type: 'tool-call' as const, id: CallId(id), name: 'read_file', arguments: `{"path":"${i}.txt"}` })),
      { source: kimi },
    ),
    ...ids.map((id) => createToolResultMessage({ callId: CallId(id), content: `contents of ${id}` })),
    createUserMessage('Summarise them.'),
  ])
  const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey: 'sk-ant-ids-0123456789', cacheBreakpoints: false })
  server.handle(judgesIds, judgesIds)
  const first = await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages: history }))
  expect(first.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
  await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages: history }))
  const [sent, again] = server.requests.map((request) => request.body as { messages: Array<{ content: Block[] }> })
  const calls = sent!.messages[1]!.content.map((block) => block.id)
  const results = sent!.messages[2]!.content.filter((block) => block.type === 'tool_result').map((block) => block.tool_use_id)
  expect(results).toEqual(calls)
  expect(new Set(calls).size).toBe(4)
  expect(calls[3]).toBe('toolu_01ok')
  expect(calls.every((id) => ID.test(id!))).toBe(true)
  // The same history, the same bytes.
  expect(server.requests[1]!.raw).toBe(server.requests[0]!.raw)
  expect(again).toEqual(sent)
})

it("Kimi's ids repeat from one answer to the next (functions.read_file:0 each time): a repeated id goes with a suffix, and each result answers the call it answered", async () => {
  const kimi = { kind: 'model', provider: 'moonshot', model: 'kimi-k2' } as const
  const turn = (path: string): Message[] => [
    createAssistantMessage([{ type: 'tool-call', id: CallId('functions.read_file:0'), name: 'read_file', arguments: `{"path":"${path}"}` }], { source: kimi }),
    createToolResultMessage({ callId: CallId('functions.read_file:0'), content: `contents of ${path}` }),
  ]
  const history = (turns: number): Message[] =>
    deepFreeze([createUserMessage('Read the files one by one.'), ...['a', 'b', 'c'].slice(0, turns).flatMap(turn), createUserMessage('Go on.')])
  const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey: 'sk-ant-ids-0123456789', cacheBreakpoints: false })
  server.handle(judgesIds, judgesIds)
  expect((await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages: history(2) }))).at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
  expect((await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages: history(3) }))).at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
  const pairs = (at: number) => {
    const messages = (server.requests[at]!.body as { messages: Array<{ content: Array<Block & { content?: Array<{ text: string }> }> }> }).messages
    return messages.flatMap((m) => m.content.filter((b) => b.type === 'tool_use' || b.type === 'tool_result').map((b) => b.id ?? `${b.tool_use_id} <- ${b.content![0]!.text}`))
  }
  const [first, second] = [pairs(0), pairs(1)]
  expect(new Set(second.filter((_, i) => i % 2 === 0)).size).toBe(3)
  expect(second.filter((_, i) => i % 2 === 1)).toEqual(second.filter((_, i) => i % 2 === 0).map((id, i) => `${id} <- contents of ${'abc'[i]}`))
  // The earlier calls keep their ids as the history grows: the cached prefix stays.
  expect(second.slice(0, first.length)).toEqual(first)
})
