import { BatchedChunks, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { describe, expect, it } from 'vitest'
import { deferred } from './helpers'

const delta = (text: string): StreamChunk => ({ type: 'text-delta', index: 0, text })
const isThenable = (value: unknown): boolean => typeof (value as { then?: unknown } | null)?.then === 'function'

describe('BatchedChunks', () => {
  it('answers the first chunk of each batch with a promise and the rest plainly, skips empty batches, and ends with the return value', async () => {
    async function* batches(): AsyncGenerator<readonly StreamChunk[], string, undefined> {
      yield [delta('a'), delta('b')]
      yield []
      yield [delta('c')]
      return 'end'
    }
    const stream = new BatchedChunks(batches())
    const answers = [stream.next()]
    await answers[0]
    answers.push(stream.next(), stream.next())
    await answers[2]
    answers.push(stream.next())
    expect({ thenable: answers.map(isThenable), results: await Promise.all(answers) }).toEqual({
      thenable: [true, false, true, true],
      results: [
        { done: false, value: delta('a') },
        { done: false, value: delta('b') },
        { done: false, value: delta('c') },
        { done: true, value: 'end' },
      ],
    })
  })

  it('answers next() calls made without waiting in order, across batches', async () => {
    async function* batches(): AsyncGenerator<readonly StreamChunk[], void, undefined> {
      yield [delta('a'), delta('b')]
      yield [delta('c')]
    }
    const stream = new BatchedChunks(batches())
    const results = await Promise.all([stream.next(), stream.next(), stream.next(), stream.next(), stream.next()])
    expect(results).toEqual([
      { done: false, value: delta('a') },
      { done: false, value: delta('b') },
      { done: false, value: delta('c') },
      { done: true, value: undefined },
      { done: true, value: undefined },
    ])
  })

  it('answers in call order when a caller that waited for its answer calls again before an earlier call was answered', async () => {
    const gate = deferred()
    async function* batches(): AsyncGenerator<readonly StreamChunk[], void, undefined> {
      await gate.promise
      yield [delta('a'), delta('b'), delta('c')]
    }
    const stream = new BatchedChunks(batches())
    const first = stream.next()
    // One of two readers sharing the stream: it waits for its answer, then pulls again at once.
    const again = (async () => {
      await first
      return stream.next()
    })()
    const second = stream.next()
    gate.resolve()
    expect([await first, await second, await again]).toEqual([
      { done: false, value: delta('a') },
      { done: false, value: delta('b') },
      { done: false, value: delta('c') },
    ])
  })

  it("a source's throw rejects the call it answers; calls made meanwhile see the end, as an async generator answers them", async () => {
    const gate = deferred()
    async function* batches(): AsyncGenerator<readonly StreamChunk[], void, undefined> {
      await gate.promise
      throw new Error('broken')
    }
    const stream = new BatchedChunks(batches())
    const settled = (answer: unknown) =>
      Promise.resolve(answer).then(
        (result) => result,
        (error: Error) => error.message,
      )
    const answers = [stream.next(), stream.next()].map(settled)
    gate.resolve()
    expect(await Promise.all(answers)).toEqual(['broken', { done: true, value: undefined }])
  })

  it('return() mid-batch stops the source (its finally runs) and drops the rest of the batch', async () => {
    let stopped = false
    async function* batches(): AsyncGenerator<readonly StreamChunk[], void, undefined> {
      try {
        yield [delta('a'), delta('b'), delta('c')]
        yield [delta('never')]
      } finally {
        stopped = true
      }
    }
    const stream = new BatchedChunks(batches())
    const first = await stream.next()
    const returned = await stream.return()
    expect({ first, returned, stopped, after: await stream.next() }).toEqual({
      first: { done: false, value: delta('a') },
      returned: { done: true, value: undefined },
      stopped: true,
      after: { done: true, value: undefined },
    })
  })

  it('return() while a batch is pending ends the pending next() too', async () => {
    const gate = deferred()
    async function* batches(): AsyncGenerator<readonly StreamChunk[], void, undefined> {
      await gate.promise
      yield [delta('late')]
    }
    const stream = new BatchedChunks(batches())
    const pending = stream.next()
    const returning = stream.return()
    gate.resolve()
    expect([await pending, await returning]).toEqual([
      { done: true, value: undefined },
      { done: true, value: undefined },
    ])
  })

  it('return() calls interrupt only while a pull is pending, so a source stuck in its read stops without waiting for it', async () => {
    const read = deferred()
    const stopped: string[] = []
    async function* batches(): AsyncGenerator<readonly StreamChunk[], void, undefined> {
      try {
        yield [delta('a'), delta('b')]
        await read.promise // a read that only the interrupt ends
        yield [delta('late')]
      } finally {
        stopped.push('finally')
      }
    }
    const interrupt = () => {
      stopped.push('interrupt')
      read.resolve()
    }
    const stream = new BatchedChunks(batches(), interrupt)
    const atHand = [await stream.next(), await stream.next()]
    const idleReturn = await new BatchedChunks(batches(), interrupt).return()
    const pending = stream.next()
    const returned = await stream.return()
    expect({ atHand, idleReturn, returned, pending: await pending, stopped }).toEqual({
      atHand: [
        { done: false, value: delta('a') },
        { done: false, value: delta('b') },
      ],
      idleReturn: { done: true, value: undefined },
      returned: { done: true, value: undefined },
      pending: { done: true, value: undefined },
      stopped: ['interrupt', 'finally'],
    })
  })

  it("a source's throw rejects that next(), and the stream is over", async () => {
    async function* batches(): AsyncGenerator<readonly StreamChunk[], void, undefined> {
      yield [delta('a')]
      throw new Error('broken')
    }
    const stream = new BatchedChunks(batches())
    const first = await stream.next()
    const failed = await Promise.resolve(stream.next()).then(
      () => 'resolved',
      (error: Error) => error.message,
    )
    expect([first, failed, await stream.next()]).toEqual([{ done: false, value: delta('a') }, 'broken', { done: true, value: undefined }])
  })
})
