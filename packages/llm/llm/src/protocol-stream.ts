import { isSignalAborted, readsAbortedNatively } from './abort-read'
import { takerOf, type ChunkSink, type ChunkTaker } from './chunk-sink'
import { toLlmFailure } from './failure'
import type { FinishReason, StreamChunk } from './stream'
import { notAStream } from './not-a-stream'
import { primeStreamPathOnce, pullSample, sinkSample, type SamplePump } from './stream-feedback'

/** The iterator result every finished stream returns; shared, never mutated. */
export const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

const IDLE = 0
const STREAMING = 1
/** A `finish` was forwarded; the source may still need `return()`. */
const FINISHED = 2
const CLOSED = 3

export type { ChunkSink, ChunkTaker } from './chunk-sink'

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
 * (the in-memory fast path of `LlmAdapter`) is pulled directly, and a plain
 * result (a chunk the source had at hand) is checked at once: the settled
 * promise of the checked result is then the one promise of the chunk. Calls
 * made without waiting are answered and checked in call order.
 */
export class ProtocolStream implements AsyncIterableIterator<StreamChunk> {
  // Fields are `declare`d and set in the constructor: class fields compile (ES2022) to a separate initializer that V8
  // calls on every construction, one more call per model call in the cold round's unoptimized code.
  private declare state: number
  private declare chunks: number
  /** The source's iterator: asynchronous, or synchronous when `sync` (the in-memory fast path of `LlmAdapter`). */
  private declare inner: AsyncIterator<StreamChunk> | Iterator<StreamChunk> | undefined
  private declare sync: boolean
  /** The `.then` handlers of every `next()` that waits (see `wait`), made once per stream. */
  private declare readonly onResult: (result: IteratorResult<StreamChunk>) => IteratorResult<StreamChunk, undefined>
  private declare readonly onError: (error: unknown) => IteratorResult<StreamChunk, undefined>
  /** The answers of `next()` that wait (a pull pending, or queued behind one) and are not checked yet. */
  private declare waiting: number
  /** The answer of the last `next()` that waited: an answer at hand queues behind it while `waiting` is not 0. */
  private declare last: Promise<IteratorResult<StreamChunk, undefined>> | undefined
  /** The running `pump`: its sink, and how its promise settles once a pull had to wait. */
  private declare sink: ChunkTaker | undefined
  private declare pumping: { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } | undefined
  private declare onPumped: ((result: IteratorResult<StreamChunk>) => void) | undefined
  private declare onPumpFailed: ((error: unknown) => void) | undefined
  private declare readonly source: StreamSource
  /**
   * The signal read before every chunk: the source's, or `undefined` once a
   * pump's sink checks that same signal itself (see `pump`). Set to
   * `undefined` before the signal is stored: V8 types a field by the first
   * value it holds, and every Node 20 signal has a hidden class of its own, so
   * a field first holding a signal is generalized by the next stream's signal,
   * deoptimizing the code that read it (the per-chunk check) at the start of
   * a process's second stream.
   */
  private declare checkSignal: AbortSignal | undefined
  private declare readonly classify: boolean
  /**
   * A sample stream of the feedback prime (`stream-feedback.ts`): its pulls and
   * its sink go through call sites of their own in `drive`, so that the sites
   * every real stream uses see only real sources and sinks. V8's call feedback
   * has no polymorphic state: one other target makes a site megamorphic, and
   * TurboFan then no longer inlines the adapter's `next` and the consumer's
   * sink into the pump (measured: steady ×0.83 with shared sites).
   */
  private declare readonly sample: boolean
  /** Whether the source's signal is one whose `aborted` `isSignalAborted` may read through Node's own getter (`readsAbortedNatively`). */
  private declare readonly nativeSignal: boolean

  constructor(source: StreamSource, classify: boolean, sample = false) {
    this.state = IDLE
    this.chunks = 0
    this.inner = undefined
    this.sync = false
    // Made by a helper, not written here as `this.onResult = (result) => …`: V8
    // allocates a function literal assigned straight to a property in the old
    // generation (it expects a long-lived method), and an old object holds what
    // it points to through every scavenge until a full GC: here the stream and
    // all it references (the caller's sink, the source and its request), for
    // every model call. Not arrow-function fields either: tsx (the bench, the
    // tests) names field functions with a helper call per instance.
    this.onResult = ProtocolStream.resultHandler(this)
    this.onError = ProtocolStream.errorHandler(this)
    this.waiting = 0
    this.last = undefined
    this.sink = undefined
    this.pumping = undefined
    this.onPumped = undefined
    this.onPumpFailed = undefined
    this.source = source
    this.checkSignal = undefined
    this.checkSignal = source.signal
    this.classify = classify
    this.sample = sample
    this.nativeSignal = readsAbortedNatively(source.signal)
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
        // After the answers of the earlier calls that still wait (call order).
        return this.waiting === 0 ? this.now(error, true) : this.wait(this.last!.then(() => Promise.reject(error), () => Promise.reject(error)))
      }
      if (this.sync) return this.now(pending, false)
      if (pending instanceof Promise) return this.wait(pending)
      if (pending != null && typeof (pending as Partial<PromiseLike<unknown>>).then === 'function') return this.wait(Promise.resolve(pending))
      // A plain result is a chunk the source had at hand (allowed by the `LlmAdapter` protocol): checked now and handed
      // on as one settled promise, unless an earlier call still waits: then it is checked after that one (call order).
      if (this.waiting === 0) return this.now(pending, false)
      const result = pending as IteratorResult<StreamChunk>
      return this.wait(this.last!.then(() => result, () => result))
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

  /**
   * A `next()` answer that waits for `pending`, checked when it settles. The
   * answers of calls made without waiting are checked in call order (a source
   * answers its own calls in order, as an async generator does), so a chunk
   * at hand for a later call never overtakes an earlier call's chunk.
   */
  private wait(pending: Promise<IteratorResult<StreamChunk>>): Promise<IteratorResult<StreamChunk, undefined>> {
    this.waiting++
    return (this.last = pending.then(this.onResult, this.onError))
  }

  /** A result at hand checked now, or a synchronous throw of the source classified now: one settled promise (a throw, a rejected one). */
  private now(value: unknown, threw: boolean): Promise<IteratorResult<StreamChunk, undefined>> {
    try {
      return Promise.resolve(threw ? this.failed(value) : this.checked(value as IteratorResult<StreamChunk>))
    } catch (thrown) {
      return Promise.reject(thrown)
    }
  }

  /** One pulled result, held to the protocol. */
  private checked(result: IteratorResult<StreamChunk>): IteratorResult<StreamChunk, undefined> {
    if (this.state !== STREAMING) return DONE // return() was called, or finish forwarded, while the pull was pending
    if (result == null) return this.notAResult(result) // a hand-written iterator's bug; other non-objects have no chunk
    if (result.done) return this.endedWithoutFinish()
    const chunk = result.value
    const signal = this.checkSignal
    if (signal !== undefined && isSignalAborted(signal, this.nativeSignal)) return this.aborted()
    if (chunk === null || typeof chunk !== 'object') return this.notAChunk(chunk)
    if (chunk.type === 'finish') this.state = FINISHED
    else this.chunks++
    return result as IteratorYieldResult<StreamChunk>
  }

  private start(): Promise<IteratorResult<StreamChunk, undefined>> {
    let failure: IteratorResult<StreamChunk, undefined> | undefined
    try {
      failure = this.open()
    } catch (thrown) {
      return Promise.reject(thrown)
    }
    return failure === undefined ? this.next() : Promise.resolve(failure)
  }

  /**
   * Opens the source (state `STREAMING`), or returns the terminal result of a
   * source that could not be opened (or throws it, without `classify`).
   */
  private open(): IteratorResult<StreamChunk, undefined> | undefined {
    try {
      const iterable = this.source.open()
      if (iterable === null || typeof iterable !== 'object' || typeof iterable[Symbol.asyncIterator] !== 'function') throw notAStream(iterable, this.source.route)
      // An in-memory source is pulled synchronously: one resolved promise per chunk instead of two (none with `pump`).
      this.sync = typeof (iterable as Partial<Iterable<StreamChunk>>)[Symbol.iterator] === 'function'
      this.inner = this.sync ? (iterable as unknown as Iterable<StreamChunk>)[Symbol.iterator]() : iterable[Symbol.asyncIterator]()
    } catch (error) {
      return this.failed(error)
    }
    this.state = STREAMING
    return undefined
  }

  /**
   * Reads the whole stream into `sink` (see `ChunkSink`; an object's `take`
   * is called as its method: see `ChunkTaker`), applying the same
   * protocol checks as `next()`. Returns `undefined` when it finished
   * synchronously (every chunk was at hand and the source is stopped), else a
   * promise that settles when it finishes. A sink's throw, or a throw of the
   * source without `classify`, is thrown (synchronously or as the rejection)
   * after the source is stopped. Call it once, instead of `next()`.
   *
   * `sinkChecks`: a signal `sink` reads itself before taking each chunk,
   * returning `false` without using the chunk once it aborted. When it is
   * the stream's own signal, the pump does not read that signal before each
   * chunk too (the sink's check decides the same thing: nothing more is taken
   * and the source is stopped); an abort is still read where it classifies
   * the end of the stream (a source that ends or throws after it). Any other
   * signal changes nothing.
   */
  pump(sink: ChunkSink | ChunkTaker, sinkChecks?: AbortSignal): Promise<void> | undefined {
    // The process's first pump gives the chunk path the feedback of an answer's end first (see `stream-feedback.ts`).
    primeStreamPathOnce(pumpSample)
    this.sink = takerOf(sink)
    if (sinkChecks !== undefined && sinkChecks === this.source.signal) this.checkSignal = undefined
    // What happens once per stream is done here, not in the loop (`drive`,
    // `await`): a branch that a hot function takes only on a stream's first
    // pull was taken, in the process's first stream, before V8 kept feedback
    // for it, and then deoptimizes that function's optimized code at the
    // start of every later stream (see the perf-stream-cold note).
    let first: IteratorResult<StreamChunk, undefined> | undefined
    if (this.state === IDLE) first = this.open()
    if (!this.sync && this.state === STREAMING) this.preparePump()
    return this.drive(first)
  }

  /** The pump's promise and the handlers of its waits, made once per stream whose source is asynchronous. */
  private preparePump(): void {
    let resolve!: () => void
    let reject!: (error: unknown) => void
    const promise = new Promise<void>((res, rej) => {
      resolve = res
      reject = rej
    })
    this.pumping = { promise, resolve, reject }
    // Through helpers, for the reason given in the constructor.
    this.onPumped = ProtocolStream.pumpedHandler(this)
    this.onPumpFailed = ProtocolStream.pumpFailedHandler(this)
  }

  /*
   * The per-stream handlers, each returned by a function of its own so that
   * V8 allocates them young (see the constructor).
   */
  private static resultHandler(stream: ProtocolStream): (result: IteratorResult<StreamChunk>) => IteratorResult<StreamChunk, undefined> {
    return (result) => {
      stream.waiting--
      return stream.checked(result)
    }
  }

  private static errorHandler(stream: ProtocolStream): (error: unknown) => IteratorResult<StreamChunk, undefined> {
    return (error) => {
      stream.waiting--
      return stream.pullFailed(error)
    }
  }

  private static pumpedHandler(stream: ProtocolStream): (result: IteratorResult<StreamChunk>) => void {
    return (result) => stream.resume(result, false, undefined)
  }

  private static pumpFailedHandler(stream: ProtocolStream): (error: unknown) => void {
    return (error) => stream.resume(undefined, true, error)
  }

  /**
   * The pump's loop: delivers `first` (a result that arrived asynchronously)
   * and then pulls and delivers for as long as results are at hand. Returns
   * `undefined` once the stream is over and the source stopped, or the
   * promise of what is still pending (a pull, or an asynchronous `return()`).
   */
  private drive(first: IteratorResult<StreamChunk, undefined> | undefined): Promise<void> | undefined {
    let result = first
    for (;;) {
      if (result === undefined) {
        const state = this.state
        if (state === STREAMING) {
          let pending: Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk>
          try {
            pending = this.sample ? pullSample(this.inner!) : this.inner!.next()
          } catch (error) {
            result = this.failed(error)
            continue
          }
          if (!this.sync) {
            if (pending instanceof Promise) return this.await(pending)
            // A thenable is adopted; a plain result (a chunk the source had at hand, see `LlmAdapter`) is taken as is, without a promise.
            if (pending != null && typeof (pending as Partial<PromiseLike<unknown>>).then === 'function') return this.await(Promise.resolve(pending))
          }
          result = this.checked(pending as IteratorResult<StreamChunk>)
          continue
        }
        return state === FINISHED ? this.stopSource() : undefined
      }
      if (result.done) return undefined
      const chunk = result.value
      result = undefined
      let more: boolean
      try {
        more = this.sample ? sinkSample(this.sink!, chunk) : this.sink!.take(chunk)
      } catch (error) {
        const stopping = this.stopSource()
        if (stopping === undefined) throw error
        return stopping.then(() => Promise.reject(error))
      }
      if (!more) return this.stopSource()
    }
  }

  /** The pump waits for `pending`; the pump's promise settles when the loop it resumes ends. */
  private await(pending: Promise<IteratorResult<StreamChunk>>): Promise<void> {
    pending.then(this.onPumped, this.onPumpFailed)
    return this.pumping!.promise
  }

  /** A pull the pump waited for settled: deliver it and go on until the next wait or the end. */
  private resume(result: IteratorResult<StreamChunk> | undefined, threw: boolean, error: unknown): void {
    const pumping = this.pumping!
    try {
      const next = this.drive(threw ? this.pullFailed(error) : this.checked(result!))
      if (next === undefined) pumping.resolve()
      else if (next !== pumping.promise) next.then(pumping.resolve, pumping.reject)
    } catch (thrown) {
      pumping.reject(thrown)
    }
  }

  /**
   * Stops the source once the pump is done with it: synchronously for a
   * synchronous source, else the promise of its `return()`. Its cleanup
   * failing is swallowed, as in `close()`.
   */
  private stopSource(): Promise<void> | undefined {
    if (!this.sync) return this.state === STREAMING || this.state === FINISHED ? this.close() : undefined
    const inner = this.inner
    this.inner = undefined
    this.state = CLOSED
    if (inner === undefined || typeof inner.return !== 'function') return undefined
    try {
      inner.return()
    } catch {
      // Swallowed on purpose, as in `close()`.
    }
    return undefined
  }

  /** A pending pull failed: as `failed`, unless return() was called or a finish forwarded meanwhile (done, as in `checked`). */
  private pullFailed(error: unknown): IteratorResult<StreamChunk, undefined> {
    return this.state === STREAMING ? this.failed(error) : DONE
  }

  /** The source threw: classify it into a terminal chunk, or rethrow when classification is off. */
  private failed(error: unknown): IteratorResult<StreamChunk, undefined> {
    // A source whose `next()` threw is finished; it is not asked to `return()`.
    this.state = CLOSED
    this.inner = undefined
    if (!this.classify) throw error
    const signal = this.source.signal
    if (signal !== undefined && isSignalAborted(signal, this.nativeSignal)) return terminal({ kind: 'aborted' })
    const failure = toLlmFailure(error)
    return terminal(failure.code === 'ABORTED' ? { kind: 'aborted', failure } : { kind: 'error', failure })
  }

  private endedWithoutFinish(): IteratorResult<StreamChunk, undefined> {
    this.state = CLOSED
    this.inner = undefined
    const signal = this.source.signal
    if (signal !== undefined && isSignalAborted(signal, this.nativeSignal)) return terminal({ kind: 'aborted' })
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

  private notAResult(value: null | undefined): IteratorResult<StreamChunk, undefined> {
    return this.malformed(`answered next() with ${String(value)} instead of an iterator result`)
  }

  private notAChunk(value: unknown): IteratorResult<StreamChunk, undefined> {
    return this.malformed(`yielded ${value === null ? 'null' : typeof value} instead of a chunk object`)
  }

  /** The source broke the protocol (`what` it did): end with `MALFORMED_STREAM` and stop it on the next pull. */
  private malformed(what: string): IteratorResult<StreamChunk, undefined> {
    this.state = FINISHED
    return terminal({ kind: 'error', failure: { code: 'MALFORMED_STREAM', message: `the model stream for ${this.source.route} ${what}` } })
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

/** The feedback prime's pump: a sample source through a new classifying stream. */
const pumpSample: SamplePump = (source, sink) => new ProtocolStream(source, true, true).pump(sink)

function terminal(reason: FinishReason): IteratorYieldResult<StreamChunk> {
  return { done: false, value: { type: 'finish', reason } }
}
