import { setTimeout as sleep } from 'node:timers/promises'
import { isSignalAborted, readsAbortedNatively, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { abortError } from './controlled-call'
import { failing } from './plan'

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

/**
 * What a `ScriptedModel` call returns: the reply's chunks (a synchronous
 * iterator, see `replyChunks`), pulled one per `next()`, as an
 * `AsyncIterableIterator`.
 *
 * - Before each chunk, an aborted `signal` ends the stream with a throw of
 *   its reason, like `fetch`; a throw of the chunk iterator (a scripted
 *   `throw`) is thrown from that `next()`. Either way the stream is over.
 * - With `delayMs > 0` each pull first waits that long (the wait itself ends
 *   at once when the signal aborts); with `0` no timer is touched.
 * - `chunks` may arrive later (an asynchronous responder): pulls wait for it
 *   in order; a rejection becomes the first pull's throw.
 *
 * A pull with no delay costs one resolved promise around the iterator's own
 * result object: no async generator frame, no awaits. A reply at hand with no
 * delay streams through `InstantReplyStream` instead (synchronously).
 */
export class ReplyStream implements AsyncIterableIterator<StreamChunk> {
  // Fields are `declare`d and set in the constructor (no per-construction field initializer; see dsh-llm's `ProtocolStream`).
  private declare chunks: Iterator<StreamChunk, void, undefined> | undefined
  private declare pending: Promise<void> | undefined
  protected declare done: boolean
  /**
   * The caller's signal, read before every chunk. Set to `undefined` before
   * the signal is stored: V8 types a field by the first value it holds, and
   * every Node 20 signal has a hidden class of its own, so a field first
   * holding a signal is generalized by the next call's signal, deoptimizing
   * the code that read it (the per-chunk pull) at the start of a process's
   * second stream.
   */
  private declare readonly signal: AbortSignal | undefined
  private declare readonly delayMs: number
  /** Whether `signal` is read through Node's own getter (`readsAbortedNatively`). */
  private declare readonly nativeSignal: boolean

  constructor(
    chunks: Iterator<StreamChunk, void, undefined> | Promise<Iterator<StreamChunk, void, undefined>>,
    signal: AbortSignal | undefined,
    delayMs: number,
  ) {
    this.chunks = undefined
    this.pending = undefined
    this.done = false
    this.signal = undefined
    this.signal = signal
    this.delayMs = delayMs
    this.nativeSignal = readsAbortedNatively(signal)
    if (chunks instanceof Promise) {
      this.pending = chunks.then(
        (iterator) => {
          this.chunks = iterator
          this.pending = undefined
        },
        (error: unknown) => {
          this.chunks = failing(error)
          this.pending = undefined
        },
      )
    } else {
      this.chunks = chunks
    }
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<IteratorResult<StreamChunk, undefined>> {
    if (this.pending !== undefined && !this.done) return this.answered().then(() => this.delayed())
    return this.delayed()
  }

  /** Ends the stream, and its source: an `InstantReplyStream` seen through this view ends for its synchronous view too. */
  return(): Promise<IteratorResult<StreamChunk, undefined>> {
    this.done = true
    this.chunks?.return?.()
    return Promise.resolve(DONE)
  }

  /**
   * Resolves once the responder's chunks arrived; rejects with the abort (the
   * stream is over) as soon as the signal aborts, as a real provider's cut
   * request does, instead of waiting for a responder that may never answer.
   * Only a call whose responder answers with a promise comes here, before
   * its first chunk: not the per-chunk path.
   */
  private answered(): Promise<void> {
    const pending = this.pending!
    const signal = this.signal
    if (signal === undefined) return pending
    if (signal.aborted) {
      this.done = true
      return Promise.reject(abortError(signal))
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.done = true
        reject(abortError(signal))
      }
      signal.addEventListener('abort', onAbort, { once: true })
      void pending.then(() => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      })
    })
  }

  private delayed(): Promise<IteratorResult<StreamChunk, undefined>> {
    if (this.delayMs > 0 && !this.done) {
      return sleep(this.delayMs, undefined, { signal: this.signal }).then(
        () => this.pull(),
        (error: unknown) => {
          this.done = true
          // The timer rejects with Node's own AbortError; a provider (and a stream without delay) throws the reason.
          const signal = this.signal
          throw signal !== undefined && signal.aborted ? abortError(signal) : error
        },
      )
    }
    try {
      return Promise.resolve(this.pull())
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /** The next chunk's result; throws the abort or the reply's throw (and the stream is over). */
  protected pull(): IteratorResult<StreamChunk, undefined> {
    if (this.done) return DONE
    const signal = this.signal
    if (signal !== undefined && isSignalAborted(signal, this.nativeSignal)) {
      this.done = true
      throw abortError(signal)
    }
    let result: IteratorResult<StreamChunk, void>
    try {
      result = this.chunks!.next()
    } catch (error) {
      this.done = true
      throw error
    }
    if (result.done) {
      this.done = true
      return DONE
    }
    return result
  }
}

/**
 * What a call returns when its reply is at hand and streams without delay:
 * the chunks as a synchronous iterator, which `ctx.llm` pulls directly (one
 * chunk per consumer `next()`, see dsh-llm's `LlmAdapter`), and an
 * `AsyncIterable` of the same chunks for any other consumer (a
 * `ReplyStream` over this iterator).
 *
 * The same contract as `ReplyStream`: before each chunk an aborted `signal`
 * ends the stream with a throw of its reason; a throw of the chunks (a
 * scripted `throw`) is thrown from that `next()`; either way the stream is
 * over. `chunks` is a generator (`replyChunks`, `failing`) or an iterator
 * that never throws, so once it threw or finished its own `next()` answers
 * done: no flag of ours is needed for that. A pull is this one call around
 * the generator's own result object.
 */
export class InstantReplyStream implements IterableIterator<StreamChunk, undefined>, AsyncIterable<StreamChunk> {
  // Fields are `declare`d and set in the constructor, `signal` after an `undefined` (see `ReplyStream`).
  private declare stopped: boolean
  private declare readonly chunks: Iterator<StreamChunk, void, undefined>
  private declare readonly signal: AbortSignal | undefined
  /** Whether `signal` is read through Node's own getter (`readsAbortedNatively`). */
  private declare readonly nativeSignal: boolean

  constructor(chunks: Iterator<StreamChunk, void, undefined>, signal: AbortSignal | undefined) {
    this.stopped = false
    this.chunks = chunks
    this.signal = undefined
    this.signal = signal
    this.nativeSignal = readsAbortedNatively(signal)
  }

  [Symbol.iterator](): this {
    return this
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<StreamChunk> {
    return new ReplyStream(this, undefined, 0)
  }

  next(): IteratorResult<StreamChunk, undefined> {
    if (this.stopped) return DONE
    const signal = this.signal
    if (signal !== undefined && isSignalAborted(signal, this.nativeSignal)) {
      this.stopped = true
      throw abortError(signal)
    }
    const result = this.chunks.next() as IteratorResult<StreamChunk, undefined>
    // Ended is ended: an abort after the last chunk does not turn a finished stream into an error.
    if (result.done === true) this.stopped = true
    return result
  }

  return(): IteratorResult<StreamChunk, undefined> {
    this.stopped = true
    return DONE
  }
}
