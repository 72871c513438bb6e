import LlmService, { type StreamChunk } from '@deepseek-ai/dsh-llm'
import { deferred, openAiChunk as chunk, openStream, type FakeProvider } from '@deepseek-ai/dsh-testkit'
import { Context } from 'cordis'
import type { ServerResponse } from 'node:http'
import { describe, expect, it } from 'vitest'
import { OpenAiAdapter } from '../src'
import { call, useFakeProvider } from './support/fixture'
import { collect } from './support/collect'

const fixture = useFakeProvider('sk-batch-test-key-0123456789')

/** Several events in one write, so that the adapter reads them in one network read. */
function writeAll(res: ServerResponse, events: unknown[]): Promise<void> {
  const text = events.map((event) => `data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`).join('')
  return new Promise((resolve) => res.write(text, () => resolve()))
}

const delta = (text: string): StreamChunk => ({ type: 'text-delta', index: 0, text })
const isThenable = (value: unknown): boolean => typeof (value as { then?: unknown } | null)?.then === 'function'

/** The stream `ctx.llm` makes of the fake provider's adapter (the guard every consumer reads through). */
async function llmStream(server: FakeProvider, signal?: AbortSignal) {
  const root = new Context()
  await root.plugin(LlmService)
  root.llm.registerAdapter(['fake'], new OpenAiAdapter({ name: 'fake', baseUrl: server.url, apiKey: 'sk-batch-test-key-0123456789' }))
  const prepared = await root.llm.prepareCall({ provider: 'fake', model: 'test-model' })
  return prepared.stream({ messages: call().messages, signal })
}

describe('the chunks of one network read', () => {
  it('after the first, come back from next() as plain results, in order; the next read is a promise again', async () => {
    const more = deferred()
    fixture.server.handle(async (_request, res) => {
      openStream(res)
      await writeAll(res, [chunk({ content: 'one' }), chunk({ content: 'two' }), chunk({ content: 'three' })])
      await more.promise
      await writeAll(res, [chunk({ content: 'four' }), chunk({}, 'stop'), '[DONE]'])
      res.end()
    })
    const stream = fixture.adapter.stream(call())[Symbol.asyncIterator]()
    const first = stream.next()
    const firstResult = await first
    const second = stream.next()
    const third = stream.next()
    const fourth = stream.next()
    more.resolve()
    const rest = await collect({ [Symbol.asyncIterator]: () => stream })
    expect({
      thenable: [first, second, third, fourth].map(isThenable),
      results: [firstResult, second, third, await fourth],
      rest,
    }).toEqual({
      thenable: [true, false, false, true],
      results: [
        { done: false, value: delta('one') },
        { done: false, value: delta('two') },
        { done: false, value: delta('three') },
        { done: false, value: delta('four') },
      ],
      rest: [{ type: 'finish', reason: { kind: 'stop' } }],
    })
  })

  it('a for await consumer and the pump of ctx.llm see the same chunks as the events sent, over several reads', async () => {
    const texts = Array.from({ length: 300 }, (_, i) => `d${i} `)
    const answer = async (_request: unknown, res: ServerResponse) => {
      openStream(res)
      for (let at = 0; at < texts.length; at += 100) await writeAll(res, texts.slice(at, at + 100).map((text) => chunk({ content: text })))
      await writeAll(res, [chunk({}, 'length'), '[DONE]'])
      res.end()
    }
    fixture.server.handle(answer)
    fixture.server.handle(answer)
    const iterated = await collect(fixture.adapter.stream(call()))
    const pumped: StreamChunk[] = []
    const stream = (await llmStream(fixture.server)) as unknown as { pump(sink: (chunk: StreamChunk) => boolean): Promise<void> | undefined }
    await stream.pump((chunk) => pumped.push(chunk) > 0)
    const expected = [...texts.map(delta), { type: 'finish', reason: { kind: 'max-tokens' } }]
    expect({ iterated, pumped }).toEqual({ iterated: expected, pumped: expected })
  })
})

describe('stopping in the middle of a read', () => {
  it("the caller's abort ends the ctx.llm stream with aborted at the next chunk, and the connection closes", async () => {
    fixture.server.handle(async (_request, res, closed) => {
      openStream(res)
      await writeAll(res, [chunk({ content: 'one' }), chunk({ content: 'two' }), chunk({ content: 'three' })])
      await closed
    })
    const controller = new AbortController()
    const seen: StreamChunk[] = []
    const stream = (await llmStream(fixture.server, controller.signal)) as unknown as {
      pump(sink: (chunk: StreamChunk) => boolean): Promise<void> | undefined
    }
    await stream.pump((chunk) => {
      seen.push(chunk)
      if (seen.length === 1) controller.abort()
      return true
    })
    await fixture.server.closes[0]
    expect(seen).toEqual([delta('one'), { type: 'finish', reason: { kind: 'aborted' } }])
  })

  it('the same through for await on the ctx.llm stream', async () => {
    fixture.server.handle(async (_request, res, closed) => {
      openStream(res)
      await writeAll(res, [chunk({ content: 'one' }), chunk({ content: 'two' }), chunk({ content: 'three' })])
      await closed
    })
    const controller = new AbortController()
    const seen: StreamChunk[] = []
    for await (const chunk of await llmStream(fixture.server, controller.signal)) {
      seen.push(chunk)
      if (seen.length === 1) controller.abort()
    }
    await fixture.server.closes[0]
    expect(seen).toEqual([delta('one'), { type: 'finish', reason: { kind: 'aborted' } }])
  })

  it("return() on the adapter's stream mid-batch closes the connection and ends the stream", async () => {
    fixture.server.handle(async (_request, res, closed) => {
      openStream(res)
      await writeAll(res, [chunk({ content: 'one' }), chunk({ content: 'two' }), chunk({ content: 'three' })])
      await closed
    })
    const stream = fixture.adapter.stream(call())[Symbol.asyncIterator]()
    const first = await stream.next()
    const second = await stream.next()
    const returned = await stream.return!()
    await fixture.server.closes[0]
    expect([first, second, returned, await stream.next()]).toEqual([
      { done: false, value: delta('one') },
      { done: false, value: delta('two') },
      { done: true, value: undefined },
      { done: true, value: undefined },
    ])
  })
})
