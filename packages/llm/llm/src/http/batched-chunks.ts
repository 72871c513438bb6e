import type { StreamChunk } from '../stream'

/** What `BatchedChunks.next()` answers: a plain result for a chunk at hand, a promise when it has to wait. */
export type ChunkAnswer<R> = IteratorResult<StreamChunk, R> | Promise<IteratorResult<StreamChunk, R>>

/**
 * A chunk stream read one batch at a time: each batch is the chunks decoded
 * from one network read. `next()` answers the first chunk of a batch with a
 * promise (it had to wait for the read) and the rest of the batch with plain
 * results, without a promise: the `LlmAdapter` protocol's chunks at hand.
 * `ctx.llm`'s pump takes those without a promise; a consumer that `await`s
 * each answer (`for await`, `yield*`) sees the same chunks in the same order
 * as from a generator yielding them one by one. Ends with the source's return
 * value.
 *
 * `return()` stops the source (an async generator's `finally` closes its
 * exchange, and so the connection), also in the middle of a batch; the rest
 * of that batch is dropped. An async generator's `return()` waits behind its
 * pending `next()`, so a `return()` while a pull is pending first calls
 * `interrupt` (when given), which must make that pull settle at once (abort
 * the read it waits for); the pending calls then see the end. The caller's
 * signal is not read here: the adapter's consumer (`ctx.llm`) reads it before
 * each chunk, and the source meets the abort at its next read.
 *
 * Concurrent `next()` calls (a consumer that does not wait, or several
 * readers) are answered in call order, as an async generator answers them:
 * while a call waits, each later call waits for the one before it, even a
 * call for which a chunk is at hand. A throw of the source rejects the call
 * it answers; the calls queued behind it see the end.
 *
 * The HTTP helpers compose on `batches` (see `batchesOf`), not on the chunk
 * view: one promise chain per network read, not per chunk.
 */
export class BatchedChunks<R = void> {
  // Fields are `declare`d and set in the constructor (no per-construction field initializer; see `ProtocolStream`).
  /** The source of batches (each the chunks of one read, never changed afterwards), for composing without the chunk view. */
  declare readonly batches: AsyncGenerator<readonly StreamChunk[], R, undefined>
  private declare batch: readonly StreamChunk[]
  private declare at: number
  /** The final result, once the source ended or was stopped. */
  private declare end: IteratorReturnResult<R> | undefined
  /** The calls answered with a promise that have not taken their chunk yet (a pull pending, or queued behind one). */
  private declare waiting: number
  /** The answer of the last call that had to wait: the next call queues behind it while `waiting` is not 0. */
  private declare last: Promise<IteratorResult<StreamChunk, R>> | undefined
  private declare readonly onBatch: (result: IteratorResult<readonly StreamChunk[], R>) => ChunkAnswer<R>
  private declare readonly onFailure: (error: unknown) => never
  private declare readonly onTurn: () => ChunkAnswer<R>
  /**
   * What `return()` calls while a pull is pending: makes the source's pending
   * `next()` settle promptly (e.g. aborts the exchange's read), so that the
   * source's `return()`, queued behind it, runs. Composing streams pass it on.
   */
  declare readonly interrupt: (() => void) | undefined

  /**
   * @param batches the source: each batch the chunks of one read.
   * @param interrupt see `interrupt`; without it, a `return()` during a pending pull waits for that pull.
   */
  constructor(batches: AsyncGenerator<readonly StreamChunk[], R, undefined>, interrupt?: () => void) {
    this.batches = batches
    this.interrupt = interrupt
    this.batch = NONE
    this.at = 0
    this.end = undefined
    this.waiting = 0
    this.last = undefined
    // Made by helpers, not literals assigned to fields: V8 allocates those in the old generation (see `ProtocolStream`).
    this.onBatch = BatchedChunks.batchHandler(this)
    this.onFailure = BatchedChunks.failureHandler(this)
    this.onTurn = BatchedChunks.turnHandler(this)
  }

  /**
   * The chunk view. Typed as an `AsyncIterator` so that the stream is an
   * `AsyncIterable<StreamChunk>`, but its `next()` may answer with a plain
   * result (`ChunkAnswer`): `await` it, never call `.then` on it.
   */
  [Symbol.asyncIterator](): AsyncIterator<StreamChunk, R> {
    return this as unknown as AsyncIterator<StreamChunk, R>
  }

  /** The next chunk: a plain result when it is at hand, else a promise of the next batch's first chunk (or of the end). */
  next(): ChunkAnswer<R> {
    if (this.waiting === 0) {
      const batch = this.batch
      const at = this.at
      if (at < batch.length) {
        this.at = at + 1
        return { done: false, value: batch[at]! }
      }
      if (this.end !== undefined) return Promise.resolve(this.end)
      return (this.last = this.pull())
    }
    // An earlier call still waits: this one takes its turn after it (call order; a rejection ends the wait too).
    this.waiting++
    return (this.last = this.last!.then(this.onTurn, this.onTurn))
  }

  /**
   * Stops the source (also mid-batch: the rest of the batch is dropped) and
   * ends the stream; while a pull is pending, `interrupt` first makes it
   * settle, so the source stops without waiting for its read.
   */
  async return(value?: R): Promise<IteratorResult<StreamChunk, R>> {
    this.batch = NONE
    this.at = 0
    if (this.end !== undefined) return this.end
    this.end = { done: true, value: value as R }
    if (this.waiting !== 0 && this.interrupt !== undefined) this.interrupt()
    await this.batches.return(value as R)
    return this.end
  }

  /** Pulls the next batch for a waiting call (counted in `waiting` until the batch arrives). A generator's next() never throws. */
  private pull(): Promise<IteratorResult<StreamChunk, R>> {
    this.waiting++
    return this.batches.next().then(this.onBatch, this.onFailure)
  }

  /** A waiting call's chunk: the next at hand, the end, or a pull of the next batch. */
  private take(): ChunkAnswer<R> {
    const batch = this.batch
    const at = this.at
    if (at < batch.length) {
      this.at = at + 1
      return { done: false, value: batch[at]! }
    }
    if (this.end !== undefined) return this.end
    return this.pull()
  }

  /** A batch arrived: its first chunk, or the end; an empty batch is skipped. */
  private received(result: IteratorResult<readonly StreamChunk[], R>): ChunkAnswer<R> {
    this.waiting--
    if (this.end !== undefined) return this.end // return() was called while the read was pending
    if (result.done) {
      this.end = { done: true, value: result.value }
      return this.end
    }
    this.batch = result.value
    this.at = 0
    return this.take()
  }

  private static batchHandler<R>(stream: BatchedChunks<R>): (result: IteratorResult<readonly StreamChunk[], R>) => ChunkAnswer<R> {
    return (result) => stream.received(result)
  }

  private static failureHandler<R>(stream: BatchedChunks<R>): (error: unknown) => never {
    return (error) => {
      stream.waiting--
      stream.end ??= { done: true, value: undefined as R }
      throw error
    }
  }

  /** A queued call's turn: the call before it was answered. */
  private static turnHandler<R>(stream: BatchedChunks<R>): () => ChunkAnswer<R> {
    return () => {
      stream.waiting--
      return stream.take()
    }
  }
}

const NONE: readonly StreamChunk[] = Object.freeze([])

/**
 * The batches of a chunk stream: a `BatchedChunks`' own source, taken as it
 * is; any other `AsyncIterable<StreamChunk>` one chunk per batch (an adapter
 * whose `events` yields chunks one by one still works, at a batch per chunk).
 */
export function batchesOf(stream: AsyncIterable<StreamChunk>): AsyncGenerator<readonly StreamChunk[], unknown, undefined> {
  return stream instanceof BatchedChunks ? (stream.batches as AsyncGenerator<readonly StreamChunk[], unknown, undefined>) : singles(stream)
}

async function* singles(stream: AsyncIterable<StreamChunk>): AsyncGenerator<readonly StreamChunk[], void, undefined> {
  for await (const chunk of stream) yield [chunk]
}

/** One batch, then the end: a call that ended before any exchange (a refusal, an abort). */
export async function* onlyBatch(batch: readonly StreamChunk[]): AsyncGenerator<readonly StreamChunk[], void, undefined> {
  yield batch
}
