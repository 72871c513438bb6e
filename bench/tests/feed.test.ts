import { describe, expect, it } from 'vitest'
import { batchedIterator, batchedReadableStream, pushInBatches } from '../src/lib/feed.ts'

/** Boundaries a test opens one at a time: `waiting` counts the feed's pending waits. */
function gates() {
  const waiting: Array<() => void> = []
  return {
    boundary: () => new Promise<void>((resolve) => waiting.push(resolve)),
    get waiting() {
      return waiting.length
    },
    open() {
      const next = waiting.shift()
      if (!next) throw new Error('the feed is not waiting for a boundary')
      next()
    },
  }
}

/** Lets every pending microtask (and promise chain) run: one turn of the event loop. */
const settle = () => new Promise((resolve) => setImmediate(resolve))

const items = [1, 2, 3, 4, 5, 6, 7]

/** The batches a feed delivered, one entry per opened boundary, and whether it finished. */
async function batchesOf(gate: ReturnType<typeof gates>, got: number[], finished: () => boolean): Promise<{ batches: number[][]; finished: boolean }> {
  const batches: number[][] = []
  await settle()
  // Nothing arrives before the first read.
  expect(got).toEqual([])
  while (gate.waiting > 0) {
    const before = got.length
    gate.open()
    await settle()
    batches.push(got.slice(before))
  }
  return { batches, finished: finished() }
}

describe('feeding deltas in batches, one batch per boundary', () => {
  it('an async iterator (dsh adapter) delivers `size` items per boundary, in order, then ends', async () => {
    const gate = gates()
    const got: number[] = []
    let done = false
    void (async () => {
      for await (const item of batchedIterator(items[Symbol.iterator](), 3, gate.boundary)) got.push(item)
      done = true
    })()
    expect(await batchesOf(gate, got, () => done)).toEqual({ batches: [[1, 2, 3], [4, 5, 6], [7]], finished: true })
  })

  it('the async iterator (dsh adapter) answers the first item of each batch with a promise and the rest plainly, as dsh\'s HTTP adapters do', async () => {
    const isThenable = (value: unknown) => typeof (value as { then?: unknown } | null)?.then === 'function'
    const iterator = batchedIterator(items[Symbol.iterator](), 3, async () => {})
    const answers: unknown[] = []
    const results: unknown[] = []
    for (let i = 0; i < items.length + 1; i++) {
      const answer = iterator.next()
      answers.push(isThenable(answer))
      results.push(await answer)
    }
    expect({ answers, results }).toEqual({
      answers: [true, false, false, true, false, false, true, false],
      results: [...items.map((value) => ({ done: false, value })), { done: true, value: undefined }],
    })
  })

  it("every dsh stream's next() is the same function, as the real adapters' (BatchedChunks.prototype.next), not one made per stream", () => {
    const first = batchedIterator([1, 2][Symbol.iterator](), 2, async () => {})
    const second = batchedIterator([3][Symbol.iterator](), 1, async () => {})
    expect({ next: first.next === second.next, return: first.return === second.return }).toEqual({ next: true, return: true })
  })

  it('pushing into a queue (pi-agent-core) pushes `size` items per boundary, in order, then resolves', async () => {
    const gate = gates()
    const got: number[] = []
    let done = false
    void pushInBatches(items, (item) => got.push(item), 3, gate.boundary).then(() => (done = true))
    expect(await batchesOf(gate, got, () => done)).toEqual({ batches: [[1, 2, 3], [4, 5, 6], [7]], finished: true })
  })

  it('a ReadableStream (AI SDK) enqueues `size` items per boundary, in order, then closes', async () => {
    const gate = gates()
    const got: number[] = []
    let done = false
    void (async () => {
      const reader = batchedReadableStream(items, 3, gate.boundary).getReader()
      for (let read = await reader.read(); !read.done; read = await reader.read()) got.push(read.value)
      done = true
    })()
    const { batches, finished } = await batchesOf(gate, got, () => done)
    // Closing may need one more pull (and boundary) when the items fill the last batch exactly; here they do not.
    expect({ batches, finished }).toEqual({ batches: [[1, 2, 3], [4, 5, 6], [7]], finished: true })
  })

  it('builds each item only when it is taken, so a generator can update shared state as a provider does', async () => {
    const built: number[] = []
    function* lazy() {
      for (const item of items) {
        built.push(item)
        yield item
      }
    }
    const gate = gates()
    const iterator = batchedIterator(lazy(), 3, gate.boundary)
    const first = iterator.next()
    await settle()
    expect(built).toEqual([])
    gate.open()
    expect(await first).toEqual({ done: false, value: 1 })
    expect(built).toEqual([1])
  })

  it('a throw of the source ends the stream at its position, and return() is passed on', async () => {
    function* failing() {
      yield 1
      throw new Error('aborted')
    }
    const iterator = batchedIterator(failing(), 4, async () => {})
    expect(await iterator.next()).toEqual({ done: false, value: 1 })
    await expect(iterator.next()).rejects.toThrow('aborted')
    expect(await iterator.next()).toEqual({ done: true, value: undefined })

    let returned = false
    const source: Iterator<number> = { next: () => ({ done: false, value: 0 }), return: () => ((returned = true), { done: true, value: undefined }) }
    await batchedIterator(source, 2, async () => {}).return!()
    expect(returned).toBe(true)
  })

  it('by default the boundary is a turn of the event loop: a macrotask queued during a batch runs before the next batch', async () => {
    const log: Array<number | string> = []
    for await (const item of batchedIterator(items[Symbol.iterator](), 3)) {
      if (item === 1) setImmediate(() => log.push('macrotask'))
      log.push(item)
    }
    expect(log).toEqual([1, 2, 3, 'macrotask', 4, 5, 6, 7])

    const pushed: Array<number | string> = []
    await pushInBatches(items, (item) => {
      if (item === 1) setImmediate(() => pushed.push('macrotask'))
      pushed.push(item)
    }, 3)
    expect(pushed).toEqual([1, 2, 3, 'macrotask', 4, 5, 6, 7])
  })

  it('refuses a batch size that is not a positive integer', () => {
    for (const size of [0, -1, 1.5, Number.NaN]) {
      expect(() => batchedIterator(items[Symbol.iterator](), size)).toThrow(RangeError)
      expect(() => batchedReadableStream(items, size)).toThrow(RangeError)
    }
  })
})
