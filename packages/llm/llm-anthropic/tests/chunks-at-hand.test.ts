import { createUserMessage, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { deferred, FakeProvider, openStream } from '@deepseek-ai/dsh-testkit'
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
})
