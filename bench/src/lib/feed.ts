/**
 * Feeding a subject's model stream the way a network does: deltas in batches,
 * one batch per macrotask.
 *
 * A provider's answer reaches a client as Server-Sent Events over TLS. Each
 * socket read hands the SSE parser whatever arrived since the previous read,
 * and the parser delivers all of it (microtasks only: an async generator, a
 * Web stream) before the event loop turns again for the next read. So a
 * client sees bursts of deltas separated by macrotasks, never the whole
 * answer at once (it does not exist yet) and never one delta per turn of the
 * event loop when the client is the bottleneck.
 *
 * The size of a burst: chunk throughput only matters when deltas arrive
 * faster than the client handles them; then every read finds a full TLS
 * record waiting, at most 16 KiB of plaintext. One OpenAI-style
 * `chat.completion.chunk` event carrying one token (`data: {"id":…,
 * "object":"chat.completion.chunk","created":…,"model":…,
 * "system_fingerprint":…,"choices":[{"index":0,"delta":{"content":" word"},
 * "logprobs":null,"finish_reason":null}]}` plus the HTTP chunk framing) is
 * about 250 bytes, so a full record carries about 64 of them: the default
 * `STREAM_BATCH`. A slow model (tens of tokens per second) gives one delta per
 * read, and the chunk path is then idle most of the time anyway.
 *
 * Every subject gets the same batches through its own transport seam, each
 * the way its real transport delivers one network read:
 *
 * - dsh: an `LlmAdapter` whose stream is a pull-based async iterator
 *   (`batchedIterator`) that answers the first `next()` of each batch with a
 *   promise (it waits for the read) and the other `size - 1` with plain
 *   results. That is what dsh's own HTTP adapters do with the chunks decoded
 *   from one network read (dsh-llm's `BatchedChunks`; the `LlmAdapter`
 *   protocol's "chunks at hand"), and `ctx.llm` takes those without a promise.
 *   Answering every chunk with a promise, as this feed did before the real
 *   adapters did so, would charge dsh a promise per chunk no provider costs it.
 * - pi-agent-core: a `streamFn` pushing into pi-ai's
 *   `AssistantMessageEventStream` (`pushInBatches`), as pi-ai's providers push
 *   each parsed event; its consumer reads that queue with `for await`, one
 *   promise per event, which is pi's own transport.
 * - the AI SDK: a `ReadableStream` of stream parts (`batchedReadableStream`),
 *   as its providers' parsed response body; every `read()` of a Web stream
 *   answers with a promise, by the Streams standard.
 *
 * pi-agent-core and the AI SDK cannot take a result without a promise through
 * these seams, so they are fed as before. Fed all at once instead, pi's queue
 * removes each event with `Array.prototype.shift` (O(queue length)), so a
 * 100,000-delta answer costs it O(n²): an artefact that no provider causes.
 */

/** Deltas per batch: about one full TLS record of SSE events (see the module comment). */
export const STREAM_BATCH = 64

/** Waits for the next turn of the event loop (a macrotask), as the next network read would. */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/** How a feed waits between batches; tests pass their own to observe the boundaries. */
export type Boundary = () => Promise<void>

function checkSize(size: number): void {
  if (!(Number.isSafeInteger(size) && size > 0)) throw new RangeError(`a batch size must be a positive integer (got ${size})`)
}

/**
 * What `batchedIterator` returns: an async iterator whose `next()` answers an
 * item at hand with a plain result (see the module comment). An
 * `AsyncIterable` for `for await`; `await` each `next()`, never call `.then`
 * on it.
 */
export interface BatchedIterator<T> {
  next(): IteratorResult<T, undefined> | Promise<IteratorResult<T, undefined>>
  return(): Promise<IteratorResult<T, undefined>>
  [Symbol.asyncIterator](): AsyncIterator<T, undefined>
}

/**
 * A pull-based async iterator over `source`, delivered in batches of `size`:
 * the first `next()` of each batch (the first batch included: the response's
 * first bytes come after the request) waits for `boundary()` and answers with
 * a promise; the other `size - 1` answer with plain results, without a
 * promise, as dsh's HTTP adapters answer the rest of a network read's chunks.
 * Pulls `source` lazily, one item per `next()`, so a throw of `source` (an
 * aborted call) surfaces in order, as a rejected promise. `return()` is
 * passed on to `source`.
 *
 * A class, so that every stream's `next` is the same function, as the real
 * adapters' is (`BatchedChunks.prototype.next`): with a closure made per
 * stream, each stream's `next` was a new function at `ctx.llm`'s pull site,
 * and the second answer of a process deoptimized the pump there ("wrong call
 * target"), a cost the real adapters never cause.
 */
export function batchedIterator<T>(source: Iterator<T, unknown, undefined>, size: number = STREAM_BATCH, boundary: Boundary = nextMacrotask): BatchedIterator<T> {
  checkSize(size)
  return new Batched(source, size, boundary)
}

class Batched<T> implements BatchedIterator<T> {
  private left = 0
  private finished = false

  constructor(
    private readonly source: Iterator<T, unknown, undefined>,
    private readonly size: number,
    private readonly boundary: Boundary,
  ) {}

  next(): IteratorResult<T, undefined> | Promise<IteratorResult<T, undefined>> {
    if (this.left > 0 || this.finished) {
      try {
        return this.pull()
      } catch (error) {
        this.finished = true
        return Promise.reject(error)
      }
    }
    this.left = this.size
    return this.boundary().then(() => {
      try {
        return this.pull()
      } catch (error) {
        this.finished = true
        throw error
      }
    })
  }

  return(): Promise<IteratorResult<T, undefined>> {
    this.finished = true
    this.source.return?.()
    return Promise.resolve({ done: true, value: undefined })
  }

  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    // The plain answers are the point (see the module comment); TypeScript's AsyncIterator type cannot say so.
    return this as unknown as AsyncIterator<T, undefined>
  }

  private pull(): IteratorResult<T, undefined> {
    if (this.finished) return { done: true, value: undefined }
    const result = this.source.next()
    if (result.done) {
      this.finished = true
      return { done: true, value: undefined }
    }
    this.left--
    return { done: false, value: result.value }
  }
}

/**
 * Pushes `items` through `push` in batches of `size`, waiting for
 * `boundary()` before each batch (the first included): a provider's read
 * loop feeding a push-based event queue. `items` is iterated lazily, so a
 * generator can build each event as it is pushed (pi-ai's providers update
 * the partial message in place before pushing its event). Resolves after the
 * last push.
 */
export async function pushInBatches<T>(items: Iterable<T>, push: (item: T) => void, size: number = STREAM_BATCH, boundary: Boundary = nextMacrotask): Promise<void> {
  checkSize(size)
  let inBatch = size
  for (const item of items) {
    if (inBatch === size) {
      await boundary()
      inBatch = 0
    }
    push(item)
    inBatch++
  }
}

/**
 * A `ReadableStream` of `items` that enqueues `size` of them per `pull`, each
 * pull first waiting for `boundary()`: a network body read in batches. With
 * the default high-water mark of 1, the stream pulls the next batch only once
 * its reader has taken the previous one.
 */
export function batchedReadableStream<T>(items: Iterable<T>, size: number = STREAM_BATCH, boundary: Boundary = nextMacrotask): ReadableStream<T> {
  checkSize(size)
  const iterator = items[Symbol.iterator]()
  return new ReadableStream<T>({
    async pull(controller) {
      await boundary()
      for (let i = 0; i < size; i++) {
        const result = iterator.next()
        if (result.done) {
          controller.close()
          return
        }
        controller.enqueue(result.value)
      }
    },
    cancel() {
      iterator.return?.()
    },
  })
}
