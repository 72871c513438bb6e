import { LlmError, toLlmFailure } from './failure'
import type { FinishReason, StreamChunk } from './stream'

/** The iterator result every finished stream returns; shared, never mutated. */
export const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

const IDLE = 0
const STREAMING = 1
/** A `finish` was forwarded; the source may still need `return()`. */
const FINISHED = 2
const CLOSED = 3

/** Where a `ProtocolStream` takes its chunks from, and what to say in synthesized failures. */
export interface StreamSource {
  /** Opens the source; called once, on the first `next()`. A throw is handled like an iteration throw. */
  open(): AsyncIterable<StreamChunk>
  /** The caller's signal: once it aborts, the stream ends with `{ kind: 'aborted' }`. */
  readonly signal: AbortSignal | undefined
  /** `provider/model`, for failure messages. */
  readonly route: string
}

/**
 * Holds a chunk source to the stream protocol (R-LLM-4, R-LLM-6):
 *
 * - exactly one terminal `finish`: chunks after it are not forwarded (the
 *   source is stopped with `return()`), and a source that ends without one
 *   gets a synthesized failure: `EMPTY_RESPONSE` when it produced nothing,
 *   `TRANSPORT` otherwise, `{ kind: 'aborted' }` when the caller aborted;
 * - once the caller's signal aborts, the next chunk is replaced by
 *   `{ kind: 'aborted' }` and the source is stopped;
 * - with `classify`, a throw (from `open`, the iterator factory or an
 *   iteration) becomes a terminal `finish` of kind `error` (or `aborted`) with
 *   a classified failure; without it (middleware), the throw propagates.
 *
 * The hot path forwards the source's own iterator result objects and adds one
 * promise per chunk: `next()` returns the source's `next()` promise chained
 * with one `.then` whose handlers (bound once per stream) apply the checks
 * above synchronously. No async function or generator frame sits in between:
 * with promise hooks on (any `AsyncLocalStorage` on Node 20), every promise a
 * chunk crosses is paid for. A source that is also a synchronous `Iterable`
 * (the in-memory fast path of `LlmAdapter`) is pulled directly: the checked
 * result is the one promise per chunk.
 */
export class ProtocolStream implements AsyncIterableIterator<StreamChunk> {
  private state = IDLE
  private chunks = 0
  /** The source's iterator: asynchronous, or synchronous when `sync` (the in-memory fast path of `LlmAdapter`). */
  private inner: AsyncIterator<StreamChunk> | Iterator<StreamChunk> | undefined
  private sync = false
  /** The `.then` handlers of every pull, made once per stream. */
  private readonly onResult: (result: IteratorResult<StreamChunk>) => IteratorResult<StreamChunk, undefined>
  private readonly onError: (error: unknown) => IteratorResult<StreamChunk, undefined>

  constructor(
    private readonly source: StreamSource,
    private readonly classify: boolean,
  ) {
    // Assigned here rather than as arrow-function fields: tsx (the bench, the
    // tests) names field functions with a helper call per instance.
    this.onResult = (result) => this.checked(result)
    this.onError = (error) => this.failed(error)
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<IteratorResult<StreamChunk, undefined>> {
    if (this.state === STREAMING) {
      let pending: Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk>
      try {
        pending = this.inner!.next()
      } catch (error) {
        return settle(this.onError, error)
      }
      if (this.sync) return settle(this.onResult, pending as IteratorResult<StreamChunk>)
      // A source that breaks the protocol by answering with a plain result still works.
      if (!(pending instanceof Promise)) pending = Promise.resolve(pending)
      return pending.then(this.onResult, this.onError)
    }
    if (this.state === IDLE) return this.start()
    if (this.state === FINISHED) return this.close().then(() => DONE)
    return Promise.resolve(DONE)
  }

  async return(): Promise<IteratorResult<StreamChunk, undefined>> {
    if (this.state === STREAMING || this.state === FINISHED) await this.close()
    this.state = CLOSED
    return DONE
  }

  /** One pulled result, held to the protocol. */
  private checked(result: IteratorResult<StreamChunk>): IteratorResult<StreamChunk, undefined> {
    if (this.state !== STREAMING) return DONE // return() was called, or finish forwarded, while the pull was pending
    if (result.done) return this.endedWithoutFinish()
    const chunk = result.value
    const signal = this.source.signal
    if (signal !== undefined && signal.aborted) return this.aborted()
    if (chunk === null || typeof chunk !== 'object') return this.notAChunk(chunk)
    if (chunk.type === 'finish') this.state = FINISHED
    else this.chunks++
    return result as IteratorYieldResult<StreamChunk>
  }

  private start(): Promise<IteratorResult<StreamChunk, undefined>> {
    try {
      const iterable = this.source.open()
      if (iterable === null || typeof iterable !== 'object' || typeof iterable[Symbol.asyncIterator] !== 'function') {
        throw new LlmError({
          code: 'UNKNOWN',
          message: `the model stream for ${this.source.route} is not an AsyncIterable`,
        })
      }
      // An in-memory source is pulled synchronously: one resolved promise per chunk instead of two.
      this.sync = typeof (iterable as Partial<Iterable<StreamChunk>>)[Symbol.iterator] === 'function'
      this.inner = this.sync ? (iterable as unknown as Iterable<StreamChunk>)[Symbol.iterator]() : iterable[Symbol.asyncIterator]()
    } catch (error) {
      return settle(this.onError, error)
    }
    this.state = STREAMING
    return this.next()
  }

  /** The source threw: classify it into a terminal chunk, or rethrow when classification is off. */
  private failed(error: unknown): IteratorResult<StreamChunk, undefined> {
    // A source whose `next()` threw is finished; it is not asked to `return()`.
    this.state = CLOSED
    this.inner = undefined
    if (!this.classify) throw error
    const signal = this.source.signal
    if (signal !== undefined && signal.aborted) return terminal({ kind: 'aborted' })
    const failure = toLlmFailure(error)
    return terminal(failure.code === 'ABORTED' ? { kind: 'aborted', failure } : { kind: 'error', failure })
  }

  private endedWithoutFinish(): IteratorResult<StreamChunk, undefined> {
    this.state = CLOSED
    this.inner = undefined
    const signal = this.source.signal
    if (signal !== undefined && signal.aborted) return terminal({ kind: 'aborted' })
    if (this.chunks === 0) {
      return terminal({
        kind: 'error',
        failure: { code: 'EMPTY_RESPONSE', message: `the model stream for ${this.source.route} ended without producing anything` },
      })
    }
    return terminal({
      kind: 'error',
      failure: {
        code: 'TRANSPORT',
        message: `the model stream for ${this.source.route} ended after ${this.chunks} chunk(s) without a finish chunk; the connection was probably cut`,
      },
    })
  }

  /** The caller aborted while the source kept going: end now and stop the source on the next pull. */
  private aborted(): IteratorResult<StreamChunk, undefined> {
    this.state = FINISHED
    return terminal({ kind: 'aborted' })
  }

  private notAChunk(value: unknown): IteratorResult<StreamChunk, undefined> {
    this.state = FINISHED
    return terminal({
      kind: 'error',
      failure: {
        code: 'MALFORMED_STREAM',
        message: `the model stream for ${this.source.route} yielded ${value === null ? 'null' : typeof value} instead of a chunk object`,
      },
    })
  }

  /** Stops the source. Its cleanup failing after the stream ended is not the consumer's problem. */
  private async close(): Promise<void> {
    const inner = this.inner
    this.inner = undefined
    this.state = CLOSED
    if (inner === undefined || typeof inner.return !== 'function') return
    try {
      await inner.return()
    } catch {
      // Swallowed on purpose: the stream already delivered its terminal chunk.
    }
  }
}

/** `handle(value)` as a promise: its result, or its throw as a rejection. */
function settle<T>(handle: (value: T) => IteratorResult<StreamChunk, undefined>, value: T): Promise<IteratorResult<StreamChunk, undefined>> {
  try {
    return Promise.resolve(handle(value))
  } catch (thrown) {
    return Promise.reject(thrown)
  }
}

function terminal(reason: FinishReason): IteratorYieldResult<StreamChunk> {
  return { done: false, value: { type: 'finish', reason } }
}
