/**
 * The backend's own queue of encoded events, which a `WriteBehind` drains:
 * the backend encodes each event as it arrives (into whatever suits its
 * storage: bytes, rows, strings) and counts it with `WriteBehind.queued()`;
 * the write-behind takes everything queued as one batch when it writes.
 */
export interface WriteBehindQueue<Batch> {
  /** The number of events queued and not taken yet. */
  readonly length: number
  /** Takes every queued event as one batch; the queue is empty afterwards. */
  take(): Batch
  /** Gives a batch back once it is written, so its buffers can be reused. Optional. */
  release?(batch: Batch): void
  /** Drops everything queued (the writer failed, or was discarded). */
  clear(): void
}

/**
 * Where a `WriteBehind` puts its batches. The write-behind never runs two of
 * these calls at once, and calls them in order: `write`s, then a `sync` that
 * covers them, and `close` once at the end.
 */
export interface WriteBehindStorage<Batch> {
  /** Appends one batch after everything written before (stored, not necessarily durable yet). */
  write(batch: Batch): Promise<void>
  /** Makes everything written so far durable (a crash after it resolves loses none of it). */
  sync(): Promise<void>
  /**
   * Releases what the storage holds (a file handle and a lock, a connection
   * and a lease), after the last write and sync, also after a failure.
   * Called once, by `close` or `discard`. A rejection is reported by them.
   */
  close(): Promise<void>
}

export interface WriteBehindOptions<Batch> {
  readonly queue: WriteBehindQueue<Batch>
  readonly storage: WriteBehindStorage<Batch>
  /** The number of events the storage already holds: the seq the first queued event carries. */
  readonly persisted: number
  /** How long queued events may wait before they are written (not synced), in ms. */
  readonly intervalMs: number
  /** Queued events that make a batch: reaching it writes in the next macrotask instead of waiting for the timer. */
  readonly batchSize: number
  /**
   * The error the writer stops with when `write` or `sync` throws `error`:
   * typed, naming where it failed and what is lost. Every pending and later
   * flush rejects with the object it returns.
   */
  failure(error: unknown): Error
  /** Told once, when the writer stops after a failure (to log it: the failure may happen with no flush waiting). */
  onFail?(error: Error): void
}

interface FlushWaiter {
  /** Resolved once this many events are durable. */
  readonly target: number
  resolve(): void
  reject(error: unknown): void
}

/**
 * The write-behind of one session, independent of the storage (R-PER-1):
 * what every persistence backend needs between `session/event` and a
 * durable record, so that a backend supplies only its queue (encoding) and
 * its storage (`write`, `sync`, `close`).
 *
 * - **Batching.** The backend queues each event (`queued()` counts it); the
 *   queue is written, not synced, when `intervalMs` has passed since the
 *   first unwritten event, or at once when `batchSize` events are waiting.
 * - **Flush coalescing.** `flush()` resolves once every event queued before
 *   the call is durable. One pass writes whatever is queued and syncs once
 *   for every flush it covers; a flush waits only for its own target, never
 *   for events queued after it (later appends cannot starve it). A flush
 *   with nothing pending resolves at once, touching no storage.
 * - **Sticky failure.** The first failure of `write` or `sync` (or one the
 *   backend reports with `fail`, such as an event it cannot encode) stops the
 *   writer for good: the storage may now end in a torn record, and writing
 *   after it would bury it. Every pending and later flush rejects with that
 *   same error object until the writer is closed, also once the cause has
 *   gone; `onFail` reports it once, when it happens.
 * - **Close.** `close()` drains and syncs everything queued, then closes the
 *   storage (also when the last flush failed; that failure is then the
 *   rejection). `discard(error)` drops the queue and closes.
 */
export class WriteBehind<Batch> {
  /** The seq the next queued event carries: the events stored plus those queued. */
  nextSeq: number

  private readonly queue: WriteBehindQueue<Batch>
  private readonly storage: WriteBehindStorage<Batch>
  private written: number
  private synced: number
  private waiters: FlushWaiter[] = []
  private failure: Error | undefined
  private timer: NodeJS.Timeout | undefined
  private immediate: NodeJS.Immediate | undefined
  private pumping: Promise<void> | undefined
  private again = false
  private closing: Promise<void> | undefined

  constructor(private readonly options: WriteBehindOptions<Batch>) {
    this.queue = options.queue
    this.storage = options.storage
    this.nextSeq = this.written = this.synced = options.persisted
  }

  /** The failure that stopped the writer, if it has stopped. */
  get failed(): Error | undefined {
    return this.failure
  }

  /** Whether `close()` or `discard()` has begun. */
  get closed(): boolean {
    return this.closing !== undefined
  }

  /**
   * Settles when a started `close()` or `discard()` has finished: rejects
   * when the close's last flush failed. Resolves at once if neither started.
   */
  whenClosed(): Promise<void> {
    return this.closing ?? Promise.resolve()
  }

  /**
   * Counts one event the backend has just added to its queue (it carries
   * `nextSeq`) and schedules its write. Once `close` or `discard` has begun,
   * nothing more is written: the storage is being closed.
   */
  queued(): void {
    this.nextSeq++
    // A running pass writes everything queued before it stops.
    if (this.pumping === undefined && this.closing === undefined) this.arm()
  }

  /**
   * Resolves once every event queued before the call is durable; rejects
   * with the writer's failure if it has failed (or fails meanwhile).
   */
  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure)
    const target = this.nextSeq
    if (target <= this.synced) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ target, resolve, reject })
      this.kick()
    })
  }

  /** Stops the writer for good with `error` (the first failure sticks); `notify` tells `onFail`. */
  fail(error: Error, notify = true): void {
    if (this.failure) return
    this.failure = error
    this.queue.clear()
    for (const waiter of this.waiters.splice(0)) waiter.reject(error)
    if (notify) this.options.onFail?.(error)
  }

  /**
   * Drains and syncs everything queued, then closes the storage, which is
   * closed even when the last flush fails; that failure is then the
   * rejection (a failure to close comes second). Calling it again returns
   * the same promise.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      let failure: unknown
      try {
        await this.flush()
      } catch (error) {
        failure = error
      }
      const closing = await this.shutdown()
      if (failure !== undefined) throw failure
      if (closing !== undefined) throw closing
    })()
    return this.closing
  }

  /**
   * Drops whatever is queued (the session is being deleted, or was never
   * published) and closes the storage. Pending flushes reject with `error`,
   * which `onFail` is not told about.
   */
  discard(error: Error): Promise<void> {
    this.closing ??= (async () => {
      this.fail(error, false)
      const closing = await this.shutdown()
      if (closing !== undefined) throw closing
    })()
    return this.closing
  }

  /** Waits for a running pass, then closes the storage; returns (does not throw) its failure. */
  private async shutdown(): Promise<unknown> {
    this.clearTimers()
    await this.pumping
    try {
      await this.storage.close()
      return undefined
    } catch (error) {
      return error ?? new Error('closing the storage failed')
    }
  }

  /** Schedules a write: at once when a batch is full, else when the interval has passed. */
  private arm(): void {
    if (this.queue.length >= this.options.batchSize) {
      if (this.immediate === undefined) this.immediate = setImmediate(() => ((this.immediate = undefined), this.kick()))
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => ((this.timer = undefined), this.kick()), this.options.intervalMs)
      this.timer.unref()
    }
  }

  private clearTimers(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    if (this.immediate !== undefined) clearImmediate(this.immediate)
    this.timer = this.immediate = undefined
  }

  private kick(): void {
    if (this.pumping !== undefined) {
      this.again = true
      return
    }
    this.clearTimers()
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined
      if (this.again) {
        this.again = false
        this.kick()
      } else if (this.queue.length !== 0 && !this.failure && !this.closing) {
        // Events queued after the pass's last look: back to the timer.
        this.arm()
      }
    })
  }

  /** One pass: sync for every flush whose target is written, else write what is queued, until neither is left. */
  private async pump(): Promise<void> {
    try {
      while (!this.failure) {
        this.again = false
        if (this.waiters.some((waiter) => waiter.target <= this.written)) {
          await this.sync()
        } else if (this.queue.length !== 0) {
          await this.write()
        } else {
          break
        }
      }
    } catch (error) {
      this.fail(this.options.failure(error))
    }
  }

  /** Writes everything queued (events queued meanwhile wait for the next batch). */
  private async write(): Promise<void> {
    const count = this.queue.length
    const batch = this.queue.take()
    await this.storage.write(batch)
    this.written += count
    this.queue.release?.(batch)
  }

  private async sync(): Promise<void> {
    const target = this.written
    await this.storage.sync()
    this.synced = target
    const due: FlushWaiter[] = []
    this.waiters = this.waiters.filter((waiter) => (waiter.target <= target ? (due.push(waiter), false) : true))
    for (const waiter of due) waiter.resolve()
  }
}
