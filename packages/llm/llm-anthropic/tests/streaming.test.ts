import { assemble, CallId, createUserMessage, type GenerateOptions, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { FakeProvider, openStream, send } from '@deepseek-ai/dsh-testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AnthropicAdapter } from '../src'
import { collect, stream, wire } from './support/wire'

const apiKey = 'sk-ant-stream-test-0123456789'
let server: FakeProvider
let adapter: AnthropicAdapter

beforeEach(async () => {
  server = await FakeProvider.start()
  adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey })
})

afterEach(async () => {
  await server.stop()
})

const call = (extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
  provider: 'claude',
  model: 'claude-test',
  messages: [createUserMessage('Hello')],
  ...extra,
})

const signature = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/='
const redactedData = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP+='

describe('the Messages API event stream over HTTP', () => {
  it('maps thinking with its signature, redacted thinking, text, a streamed tool call, usage with cache counts and the stop reason, ignoring pings', async () => {
    server.handle(
      stream([
        wire.start({ input_tokens: 12, output_tokens: 1, cache_read_input_tokens: 4000, cache_creation_input_tokens: 300 }),
        wire.ping(),
        wire.thinking(0),
        wire.thinkingDelta(0, 'I should read '),
        wire.thinkingDelta(0, 'the file.'),
        wire.signature(0, signature),
        wire.stop(0),
        wire.redacted(1, redactedData),
        wire.stop(1),
        wire.text(2),
        wire.textDelta(2, 'Reading '),
        wire.textDelta(2, 'it.'),
        wire.stop(2),
        wire.toolUse(3, 'toolu_01', 'read_file'),
        wire.json(3, ''),
        wire.json(3, '{"path":'),
        wire.ping(),
        wire.json(3, '"a.txt"}'),
        wire.stop(3),
        wire.delta('tool_use', { output_tokens: 87 }),
        wire.end(),
      ]),
    )
    const chunks = await collect(adapter.stream(call()))
    expect(chunks).toEqual([
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 1, cacheReadTokens: 4000, cacheWriteTokens: 300 } },
      { type: 'reasoning-delta', index: 0, text: 'I should read ' },
      { type: 'reasoning-delta', index: 0, text: 'the file.' },
      { type: 'reasoning-delta', index: 0, text: '', signature },
      { type: 'redacted-reasoning-delta', index: 1, data: redactedData },
      { type: 'text-delta', index: 2, text: 'Reading ' },
      { type: 'text-delta', index: 2, text: 'it.' },
      { type: 'tool-call-delta', index: 3, id: 'toolu_01', name: 'read_file', argumentsDelta: '' },
      { type: 'tool-call-delta', index: 3, argumentsDelta: '{"path":' },
      { type: 'tool-call-delta', index: 3, argumentsDelta: '"a.txt"}' },
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 87, cacheReadTokens: 4000, cacheWriteTokens: 300 } },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ])
    expect(assemble(chunks)).toEqual({
      content: [
        { type: 'reasoning', text: 'I should read the file.', signature },
        { type: 'redacted-reasoning', data: redactedData },
        { type: 'text', text: 'Reading it.' },
        { type: 'tool-call', id: CallId('toolu_01'), name: 'read_file', arguments: '{"path":"a.txt"}' },
      ],
      usage: { inputTokens: 12, outputTokens: 87, cacheReadTokens: 4000, cacheWriteTokens: 300 },
      finishReason: { kind: 'tool-calls' },
    })
  })

  it('a tool call with no input delta gets its start input (or {}) as arguments, so every call parses', async () => {
    server.handle(
      stream([wire.start(), wire.toolUse(0, 'toolu_a', 'now'), wire.stop(0), wire.toolUse(1, 'toolu_b', 'echo', { text: 'hi' }), wire.stop(1), wire.delta('tool_use'), wire.end()]),
    )
    expect(assemble(await collect(adapter.stream(call()))).content).toEqual([
      { type: 'tool-call', id: CallId('toolu_a'), name: 'now', arguments: '{}' },
      { type: 'tool-call', id: CallId('toolu_b'), name: 'echo', arguments: '{"text":"hi"}' },
    ])
  })

  it('maps every stop reason to its finish', async () => {
    const cases: Array<[string, unknown]> = [
      ['end_turn', { kind: 'stop' }],
      ['stop_sequence', { kind: 'stop' }],
      ['pause_turn', { kind: 'stop' }],
      ['tool_use', { kind: 'tool-calls' }],
      ['max_tokens', { kind: 'max-tokens' }],
      ['model_context_window_exceeded', { kind: 'max-tokens' }],
      ['refusal', { kind: 'error', failure: { code: 'BAD_REQUEST', message: expect.stringContaining('declined') } }],
    ]
    for (const [reason] of cases) server.handle(stream([wire.start(), wire.text(0), wire.textDelta(0, 'x'), wire.stop(0), wire.delta(reason), wire.end()]))
    const finishes: unknown[] = []
    for (const _ of cases) finishes.push((await collect(adapter.stream(call()))).at(-1))
    expect(finishes).toEqual(cases.map(([, reason]) => ({ type: 'finish', reason })))
  })

  it('usage is a cumulative snapshot after message_start and after every message_delta that reports it, newer counts replacing older ones', async () => {
    server.handle(
      stream([
        wire.start({ input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 0 }),
        wire.text(0),
        wire.textDelta(0, 'a'),
        wire.delta(null, { output_tokens: 5 }),
        wire.textDelta(0, 'b'),
        wire.stop(0),
        wire.delta('end_turn', { input_tokens: 10, output_tokens: 9, cache_read_input_tokens: 0, cache_creation_input_tokens: 2000 }),
        wire.end(),
      ]),
    )
    const usages = (await collect(adapter.stream(call()))).filter((chunk) => chunk.type === 'usage')
    expect(usages).toEqual([
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 1, cacheReadTokens: 0 } },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0 } },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 2000 } },
    ])
  })

  it('an error event mid-stream keeps what came before (the usage of message_start included) and ends with the classified failure (overloaded_error is a retryable SERVER)', async () => {
    server.handle(stream([wire.start({ input_tokens: 30, output_tokens: 1 }), wire.text(0), wire.textDelta(0, 'Half an '), wire.error('overloaded_error', 'Overloaded')]))
    expect(await collect(adapter.stream(call()))).toEqual([
      { type: 'usage', usage: { inputTokens: 30, outputTokens: 1 } },
      { type: 'text-delta', index: 0, text: 'Half an ' },
      {
        type: 'finish',
        reason: { kind: 'error', failure: { code: 'SERVER', message: 'claude sent an error in the stream: Overloaded; overloaded_error; it is overloaded, try again shortly', requestId: 'req_test' } },
      },
    ])
  })

  it('a stream cut before message_stop is TRANSPORT after content, EMPTY_RESPONSE before any', async () => {
    server.handle(stream([wire.start(), wire.text(0), wire.textDelta(0, 'cut')]), stream([wire.start()]))
    const cut = await collect(adapter.stream(call()))
    const empty = await collect(adapter.stream(call()))
    expect(cut.at(-1)).toEqual({ type: 'finish', reason: { kind: 'error', failure: expect.objectContaining({ code: 'TRANSPORT' }) } })
    expect(empty).toEqual([
      { type: 'usage', usage: { inputTokens: 25, outputTokens: 1 } },
      { type: 'finish', reason: { kind: 'error', failure: expect.objectContaining({ code: 'EMPTY_RESPONSE' }) } },
    ])
  })

  it('two tool calls with one id end the stream as MALFORMED_STREAM', async () => {
    server.handle(stream([wire.start(), wire.toolUse(0, 'toolu_x', 'a'), wire.stop(0), wire.toolUse(1, 'toolu_x', 'b'), wire.stop(1), wire.delta('tool_use'), wire.end()]))
    const chunks = await collect(adapter.stream(call()))
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'error', failure: expect.objectContaining({ code: 'MALFORMED_STREAM' }) } })
  })

  it('an abort mid-stream yields only an aborted finish after it, and closes the connection', async () => {
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    server.handle(async (_request, res, closed) => {
      openStream(res)
      for (const event of [wire.start(), wire.text(0), wire.textDelta(0, 'Hello')]) await send(res, event, event.type)
      await closed
      release()
    })
    const controller = new AbortController()
    const seen: StreamChunk[] = []
    for await (const chunk of adapter.stream(call({ signal: controller.signal }))) {
      seen.push(chunk)
      if (chunk.type === 'text-delta') controller.abort()
    }
    await held
    expect(seen).toEqual([
      { type: 'usage', usage: { inputTokens: 25, outputTokens: 1 } },
      { type: 'text-delta', index: 0, text: 'Hello' },
      { type: 'finish', reason: { kind: 'aborted' } },
    ])
  })

  it('the exact key in model text is redacted; signatures and redacted data pass byte for byte', async () => {
    server.handle(
      stream([wire.start(), wire.redacted(0, redactedData), wire.stop(0), wire.text(1), wire.textDelta(1, `the key is ${apiKey}.`), wire.stop(1), wire.delta('end_turn'), wire.end()]),
    )
    const chunks = await collect(adapter.stream(call()))
    expect(chunks.slice(1, 3)).toEqual([
      { type: 'redacted-reasoning-delta', index: 0, data: redactedData },
      { type: 'text-delta', index: 1, text: 'the key is [redacted].' },
    ])
  })

  it('a key split across deltas of one block is redacted too, and the text around it arrives in order', async () => {
    server.handle(
      stream([wire.start(), wire.text(0), wire.textDelta(0, 'the key is sk-ant-str'), wire.textDelta(0, 'eam-test-01'), wire.textDelta(0, '23456789.'), wire.stop(0), wire.delta('end_turn'), wire.end()]),
    )
    const chunks = await collect(adapter.stream(call()))
    expect(chunks.filter((chunk) => chunk.type === 'text-delta')).toEqual([
      { type: 'text-delta', index: 0, text: 'the key is ' },
      { type: 'text-delta', index: 0, text: '[redacted].' },
    ])
  })
})
