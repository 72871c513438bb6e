import { createUserMessage, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { deferred, FakeProvider, openStream } from '@deepseek-ai/dsh-testkit'
import type { ServerResponse } from 'node:http'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AnthropicAdapter } from '../src'
import { collect, sseText, wire } from './support/wire'

let server: FakeProvider
let adapter: AnthropicAdapter

beforeEach(async () => {
  server = await FakeProvider.start()
  adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey: 'sk-ant-batch-test-0123456789' })
})

afterEach(async () => {
  await server.stop()
})

const call = { provider: 'claude', model: 'claude-test', messages: [createUserMessage('Hello')] }
const delta = (text: string): StreamChunk => ({ type: 'text-delta', index: 0, text })
const isThenable = (value: unknown): boolean => typeof (value as { then?: unknown } | null)?.then === 'function'

describe('the chunks of one network read', () => {
  it('after the first, come back from next() as plain results, in order; a for await consumer sees the same stream', async () => {
    const more = deferred()
    const first = [wire.start(), wire.text(0), wire.textDelta(0, 'one'), wire.textDelta(0, 'two'), wire.textDelta(0, 'three')]
    const last = [wire.textDelta(0, 'four'), wire.stop(0), wire.delta('end_turn'), wire.end()]
    server.handle(async (_request, res) => {
      openStream(res)
      await new Promise<void>((resolve) => res.write(sseText(first), () => resolve()))
      await more.promise
      res.end(sseText(last))
    })
    server.handle(async (_request, res) => {
      openStream(res)
      res.end(sseText([...first, ...last]))
    })
    const stream = adapter.stream(call)[Symbol.asyncIterator]()
    const answers = [stream.next()]
    await answers[0]
    answers.push(stream.next(), stream.next(), stream.next(), stream.next())
    more.resolve()
    const results = await Promise.all(answers)
    const rest = await collect({ [Symbol.asyncIterator]: () => stream })
    const iterated = await collect(adapter.stream(call))
    const whole = [
      { type: 'usage', usage: { inputTokens: 25, outputTokens: 1 } },
      delta('one'),
      delta('two'),
      delta('three'),
      delta('four'),
      { type: 'usage', usage: { inputTokens: 25, outputTokens: 15 } },
      { type: 'finish', reason: { kind: 'stop' } },
    ]
    expect({ thenable: answers.map(isThenable), chunks: [...results.map((result) => result.value), ...rest], iterated }).toEqual({
      thenable: [true, false, false, false, true],
      chunks: whole,
      iterated: whole,
    })
  })

  it("return() mid-batch closes the connection; the caller's abort mid-batch ends a for await with aborted after that read", async () => {
    const first = [wire.start(), wire.text(0), wire.textDelta(0, 'one'), wire.textDelta(0, 'two'), wire.textDelta(0, 'three')]
    const hold = async (_request: unknown, res: ServerResponse, closed: Promise<void>) => {
      openStream(res)
      res.write(sseText(first))
      await closed
    }
    server.handle(hold)
    server.handle(hold)
    const stream = adapter.stream(call)[Symbol.asyncIterator]()
    const taken = [await stream.next(), await stream.next()]
    const returned = await stream.return!()
    await server.closes[0]

    const controller = new AbortController()
    const seen: StreamChunk[] = []
    for await (const chunk of adapter.stream({ ...call, signal: controller.signal })) {
      seen.push(chunk)
      if (seen.length === 2) controller.abort()
    }
    await server.closes[1]
    expect({ taken: taken.map((result) => result.value), returned, seen }).toEqual({
      taken: [{ type: 'usage', usage: { inputTokens: 25, outputTokens: 1 } }, delta('one')],
      returned: { done: true, value: undefined },
      // Read directly (not through ctx.llm), an adapter stream hands out the rest of the read it holds, then the abort.
      seen: [
        { type: 'usage', usage: { inputTokens: 25, outputTokens: 1 } },
        delta('one'),
        delta('two'),
        delta('three'),
        { type: 'finish', reason: { kind: 'aborted' } },
      ],
    })
  })
})
