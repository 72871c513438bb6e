import { LlmError, type FinishReason, type LlmFailure, type LlmRequest, type StreamChunk } from '@deepseek-ai/dsh-llm'
import type { Plan } from './plan'

/**
 * How a controlled stream ended:
 * - `finished`: it delivered a `finish` chunk and then ended (or its consumer stopped it);
 * - `ended`: it ended without a `finish` (`end()`);
 * - `threw`: it threw (`throw()`, or a scripted `throw`);
 * - `aborted`: its signal aborted and it threw the abort, like a real provider;
 * - `returned`: its consumer stopped it before any `finish`.
 */
export type CloseReason = 'finished' | 'ended' | 'threw' | 'aborted' | 'returned'

const END: unique symbol = Symbol('end of stream')

class Thrown {
  constructor(readonly error: unknown) {}
}

type Item = StreamChunk | typeof END | Thrown

function deferred<T>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((res) => (resolve = res))
  return { promise, resolve }
}

/** What a real provider throws when its signal aborts: the signal's reason, like `fetch`. */
export function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError')
}

/**
 * One model call whose stream a test drives chunk by chunk (take it with
 * `ScriptedModel.control()` before the call starts).
 *
 * Nothing flows on its own: the stream holds open until the test pushes
 * chunks, steps through or releases its scripted reply, or ends it. The
 * methods that feed chunks return a promise that settles once the consumer
 * has taken everything queued so far and asked for more (or the stream
 * closed), so a test knows the consumer processed a chunk before it acts
 * again. The methods that end the stream settle when it has closed.
 *
 * When its signal aborts the stream throws the abort at once, like a real
 * provider, even with chunks still queued. Calls on a closed stream do nothing.
 */
export class ControlledCall {
  private readonly queue: Item[] = []
  private scripted: Item[] | undefined
  private cursor = 0
  private readonly planned = deferred<void>()
  private readonly startedAt = deferred<LlmRequest>()
  private readonly abortedAt = deferred<void>()
  private readonly closedAt = deferred<CloseReason>()
  private wake: (() => void) | undefined
  private waiting = false
  /** Set by the stream's `return()`: a read waiting for the test wakes and ends the stream. */
  private stopping = false
  private drainWaiters: Array<() => void> = []
  private finishSeen = false
  private closeReason: CloseReason | undefined
  private plan_: Plan | undefined
  private request_: LlmRequest | undefined
  private signal_: AbortSignal | undefined

  constructor(
    /** The 0-based index of the model call this controls. */
    readonly index: number,
  ) {}

  /** Settles with the request (a recorded copy) when the call starts. */
  get started(): Promise<LlmRequest> {
    return this.startedAt.promise
  }

  /** Settles when the call's signal aborts (never, for a call without a signal). */
  get aborted(): Promise<void> {
    return this.abortedAt.promise
  }

  /** Settles with how the stream ended. */
  get closed(): Promise<CloseReason> {
    return this.closedAt.promise
  }

  /** The request, once the call started. */
  get request(): LlmRequest | undefined {
    return this.request_
  }

  /** The call's signal, once it started. */
  get signal(): AbortSignal | undefined {
    return this.signal_
  }

  /** The reply the script (or responder) planned for this call, once it is known. */
  get plan(): Plan | undefined {
    return this.plan_
  }

  /** How the stream ended, once it has. */
  get closeState(): CloseReason | undefined {
    return this.closeReason
  }

  /** Queues chunks; settles once the consumer took them all and asked for more. */
  push(...chunks: StreamChunk[]): Promise<void> {
    if (this.closeReason !== undefined) return Promise.resolve()
    this.queue.push(...chunks)
    this.notify()
    return this.drained()
  }

  /** Queues a text delta (block `index`, default 0); settles like `push`. */
  text(text: string, index = 0): Promise<void> {
    return this.push({ type: 'text-delta', index, text })
  }

  /** Releases the next `count` items of the scripted reply; settles like `push`. */
  async step(count = 1): Promise<void> {
    await this.planned.promise
    const items = this.scripted!
    const end = Math.min(items.length, this.cursor + count)
    if (this.closeReason !== undefined) return
    while (this.cursor < end) this.queue.push(items[this.cursor++]!)
    this.notify()
    return this.drained()
  }

  /** Releases the rest of the scripted reply, ending as scripted; settles when the stream closed. */
  async release(): Promise<CloseReason> {
    await this.planned.promise
    const items = this.scripted!
    if (this.closeReason === undefined) {
      while (this.cursor < items.length) this.queue.push(items[this.cursor++]!)
      this.notify()
    }
    return this.closed
  }

  /** Queues a `finish` (default `stop`) and ends the stream; settles when it closed. */
  finish(reason: FinishReason | 'stop' | 'tool-calls' | 'max-tokens' = 'stop'): Promise<CloseReason> {
    return this.terminate({ type: 'finish', reason: typeof reason === 'string' ? { kind: reason } : reason }, END)
  }

  /** Queues an error `finish` with `failure` and ends the stream; settles when it closed. */
  fail(failure: LlmFailure): Promise<CloseReason> {
    return this.terminate({ type: 'finish', reason: { kind: 'error', failure } }, END)
  }

  /**
   * Makes the stream throw once the consumer has taken what is queued
   * (default: an `LlmError` `TRANSPORT`, a connection cut); settles when it closed.
   */
  throw(error: unknown = new LlmError({ code: 'TRANSPORT', message: 'the scripted stream was cut by the test' })): Promise<CloseReason> {
    return this.terminate(new Thrown(error))
  }

  /** Ends the stream without a `finish` once the queue is taken; settles when it closed. */
  end(): Promise<CloseReason> {
    return this.terminate(END)
  }

  /** Settles once the consumer took everything queued so far and is waiting for more, or the stream closed. */
  drained(): Promise<void> {
    if (this.closeReason !== undefined || (this.waiting && this.queue.length === 0)) return Promise.resolve()
    return new Promise((resolve) => this.drainWaiters.push(resolve))
  }

  private terminate(...items: Item[]): Promise<CloseReason> {
    if (this.closeReason === undefined) {
      this.queue.push(...items)
      this.notify()
    }
    return this.closed
  }

  private notify(): void {
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }

  private settleDrained(): void {
    const waiters = this.drainWaiters
    this.drainWaiters = []
    for (const resolve of waiters) resolve()
  }

  /** @internal The model starts the call. */
  begin(request: LlmRequest, signal: AbortSignal | undefined): void {
    this.request_ = request
    this.signal_ = signal
    if (signal !== undefined) {
      const onAbort = () => {
        this.abortedAt.resolve()
        this.notify()
      }
      if (signal.aborted) onAbort()
      else signal.addEventListener('abort', onAbort, { once: true })
    }
    this.startedAt.resolve(request)
  }

  /** @internal The model hands over the scripted reply. */
  setPlan(plan: Plan): void {
    this.plan_ = plan
    this.scripted = [...plan.chunks, 'error' in plan ? new Thrown(plan.error) : END]
    this.planned.resolve()
  }

  /**
   * @internal The stream the adapter returns. Its `return()` ends it at once,
   * also while a read waits for the test to push something (an async
   * generator's own `return()` would wait behind that read, as a provider's
   * connection would stay open until its idle deadline): the waiting read
   * then ends the stream, and the stream closes `returned` (or `finished`,
   * after a `finish`).
   */
  run(): AsyncIterableIterator<StreamChunk> {
    return new ControlledStream(
      this.generate(),
      () => {
        this.stopping = true
        this.notify()
      },
      () => this.close('returned'),
    )
  }

  /** Records how the stream ended and settles everything waiting for it. */
  private close(how: CloseReason): void {
    this.closeReason = how
    this.waiting = false
    this.settleDrained()
    this.closedAt.resolve(how)
  }

  private async *generate(): AsyncGenerator<StreamChunk, void, undefined> {
    let how: CloseReason = 'returned'
    const signal = this.signal_
    try {
      while (true) {
        while (this.queue.length === 0 && !signal?.aborted && !this.stopping) {
          this.waiting = true
          this.settleDrained()
          await new Promise<void>((resolve) => (this.wake = resolve))
          this.waiting = false
        }
        if (this.stopping) return
        if (signal?.aborted) {
          how = 'aborted'
          throw abortError(signal)
        }
        const item = this.queue.shift()!
        if (item === END) {
          how = this.finishSeen ? 'finished' : 'ended'
          return
        }
        if (item instanceof Thrown) {
          how = 'threw'
          throw item.error
        }
        if (item.type === 'finish') this.finishSeen = true
        yield item
      }
    } finally {
      this.close(how === 'returned' && this.finishSeen ? 'finished' : how)
    }
  }
}

/**
 * A controlled call's stream: its generator, with a `return()` that first
 * wakes a read waiting for the test, and closes the call itself when the
 * generator never ran (a generator returned before its first `next()` skips
 * its body, `finally` included, so `closed` would never settle).
 */
class ControlledStream implements AsyncIterableIterator<StreamChunk> {
  private started = false

  constructor(
    private readonly generator: AsyncGenerator<StreamChunk, void, undefined>,
    private readonly stop: () => void,
    private readonly closeUnread: () => void,
  ) {}

  next(): Promise<IteratorResult<StreamChunk, void>> {
    this.started = true
    return this.generator.next()
  }

  return(): Promise<IteratorResult<StreamChunk, void>> {
    if (!this.started) {
      this.started = true
      this.closeUnread()
    }
    this.stop()
    return this.generator.return(undefined)
  }

  throw(error?: unknown): Promise<IteratorResult<StreamChunk, void>> {
    return this.generator.throw(error)
  }

  [Symbol.asyncIterator](): this {
    return this
  }
}
