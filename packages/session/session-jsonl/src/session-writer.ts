import { closeSync, fsyncSync, openSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { AnySessionEvent, SessionEventMap } from '@deepseek-ai/dsh-session'
import { JsonlPersistenceError, fsError } from './errors'
import { LineBuffer } from './line-buffer'
import type { SessionLock } from './lock'

export interface SessionWriterOptions {
  id: string
  file: string
  lock: SessionLock
  /** The number of events already in the file: the seq the next appended event must carry. */
  persisted: number
  /** The file's size in bytes when the writer opened (0 for a new file). */
  size: number
  /** The file did not exist when the writer opened: the directory entry must be synced on the first flush. */
  creates: boolean
  /** How long queued lines may wait before they are written (without fsync). */
  flushIntervalMs: number
  /** Queued lines that make a batch: reaching it writes at once instead of waiting for the timer. */
  batchLines: number
  /** Told once when the writer stops after a failure (to log it: the failure may happen with no flush waiting). */
  onFail?(error: JsonlPersistenceError): void
}

interface FlushWaiter {
  /** Resolved once this many events are durable. */
  target: number
  resolve(): void
  reject(error: unknown): void
}

/**
 * The one writer of one session file (it holds the session's lock).
 *
 * Write-behind: `enqueue` only queues a serialized line (as bytes, see
 * `LineBuffer`). Queued lines are
 * written (appended, not synced) when the timer of `flushIntervalMs` fires or
 * a batch fills up; `flush()` writes whatever is queued and then fsyncs the
 * file (and, the first time, its directory when this writer created the file),
 * resolving once every event enqueued before the call is durable. A flush is
 * never starved by later appends: it waits only for its own target.
 *
 * Any write or sync error stops the writer for good: the file may now end in a
 * torn line, and appending after it would bury that line in the middle. Every
 * pending and later flush rejects with the same `JsonlPersistenceError`, whose
 * code names the cause (`NO_SPACE`, `READ_ONLY`, `PERMISSION_DENIED`,
 * `NOT_A_FILE`, else `WRITE_FAILED`) and whose message names the file; loading
 * the session again drops the torn tail (into a sidecar) and continues from the
 * last durable event.
 */
export class SessionWriter {
  /** The live session this writer serves; `undefined` for a writer opened by a direct `append()`. */
  owner: object | undefined
  /** The seq the next enqueued event must carry. */
  nextSeq: number
  /** The file's size once everything queued so far is written. */
  size: number
  /** The session's `session/meta` data, once seq 0 has been queued (for listings before the first write). */
  meta: SessionEventMap['session/meta'] | undefined
  /** The type and time of the last queued event (recorded in the handover on close). */
  lastType: string | undefined
  lastTime: number | undefined

  private readonly queue = new LineBuffer()
  private written: number
  private synced: number
  private waiters: FlushWaiter[] = []
  private handle: FileHandle | undefined
  private directoryPending: boolean
  private failure: JsonlPersistenceError | undefined
  private timer: NodeJS.Timeout | undefined
  private immediate: NodeJS.Immediate | undefined
  private pumping: Promise<void> | undefined
  private again = false
  private closing: Promise<void> | undefined

  constructor(private readonly options: SessionWriterOptions) {
    this.nextSeq = options.persisted
    this.size = options.size
    this.written = options.persisted
    this.synced = options.persisted
    this.directoryPending = options.creates
  }

  get id(): string {
    return this.options.id
  }

  get file(): string {
    return this.options.file
  }

  /** Whether the writer has stopped after a write error. */
  get failed(): JsonlPersistenceError | undefined {
    return this.failure
  }

  /** Whether `close()` or `discard()` has begun. */
  get closed(): boolean {
    return this.closing !== undefined
  }

  /**
   * Settles when a started `close()` or `discard()` has finished: rejects when
   * the close's last flush failed. Resolves at once if neither has started.
   */
  whenClosed(): Promise<void> {
    return this.closing ?? Promise.resolve()
  }

  /** Queues the line of event `nextSeq`, already serialized (the caller has checked the seq). */
  enqueue(line: string): void {
    this.size += this.queue.addLine(line)
    this.queued()
  }

  /**
   * Queues event `nextSeq` (the caller has checked the seq), serializing it.
   * Throws what `JSON.stringify` throws, queueing nothing.
   */
  enqueueEvent(event: AnySessionEvent): void {
    this.size += this.queue.addEvent(event)
    this.queued()
  }

  private queued(): void {
    this.nextSeq++
    // A running pump writes everything queued before it stops.
    if (!this.pumping) this.arm()
  }

  /** Schedules a write: at once when a batch is full, else when the interval has passed. */
  private arm(): void {
    if (this.queue.lines >= this.options.batchLines) {
      if (!this.immediate) this.immediate = setImmediate(() => ((this.immediate = undefined), this.kick()))
    } else if (!this.timer) {
      this.timer = setTimeout(() => ((this.timer = undefined), this.kick()), this.options.flushIntervalMs)
      this.timer.unref()
    }
  }

  /**
   * Resolves once every event enqueued before the call is written and
   * fsynced; rejects with `WRITE_FAILED` if the writer has failed.
   */
  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure)
    const target = this.nextSeq
    if (target <= this.synced && !this.directoryPending) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ target, resolve, reject })
      this.kick()
    })
  }

  /** Stops the writer for good (a write error, or an event that cannot be serialized); the first failure sticks. */
  fail(error: JsonlPersistenceError, notify = true): void {
    if (this.failure) return
    this.failure = error
    this.queue.clear()
    for (const waiter of this.waiters.splice(0)) waiter.reject(error)
    if (notify) this.options.onFail?.(error)
  }

  /**
   * Drains and fsyncs everything queued, closes the file and releases the
   * lock. The lock is released even when the last flush fails; that failure
   * is then the rejection. Calling it twice returns the same promise.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      let failure: unknown
      try {
        await this.flush()
      } catch (error) {
        failure = error
      }
      // The flush's failure is the one to report; a failure to close comes second.
      const closing = await this.shutdown()
      if (failure !== undefined) throw failure
      if (closing) throw closing
    })()
    return this.closing
  }

  /**
   * Drops whatever is queued (the session is being deleted, or was never
   * published), closes the file and releases the lock. Pending flushes reject
   * with `WRITE_FAILED` giving `reason`.
   */
  discard(reason: string): Promise<void> {
    this.closing ??= (async () => {
      this.fail(new JsonlPersistenceError('WRITE_FAILED', `Session "${this.id}": ${reason}; its unwritten events were dropped.`, { file: this.file }), false)
      const closing = await this.shutdown()
      if (closing) throw closing
    })()
    return this.closing
  }

  /** Closes the file and releases the lock (both, whatever fails); returns the first failure. */
  private async shutdown(): Promise<JsonlPersistenceError | undefined> {
    this.clearTimers()
    await this.pumping
    const handle = this.handle
    this.handle = undefined
    let failure: JsonlPersistenceError | undefined
    try {
      await handle?.close()
    } catch (error) {
      failure = fsError(error, { operation: 'write', file: this.file, doing: `Closing session "${this.id}"`, consequence: 'Load the session again to see what is on disk.' })
    }
    const released = this.options.lock.releaseQuietly()
    return failure ?? released
  }

  private clearTimers(): void {
    if (this.timer) clearTimeout(this.timer)
    if (this.immediate) clearImmediate(this.immediate)
    this.timer = this.immediate = undefined
  }

  private kick(): void {
    if (this.pumping) {
      this.again = true
      return
    }
    this.clearTimers()
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined
      if (this.again) {
        this.again = false
        this.kick()
      } else if (this.queue.lines !== 0 && !this.failure && !this.closing) {
        // Lines queued after the pump's last look: back to the timer.
        this.arm()
      }
    })
  }

  private async pump(): Promise<void> {
    try {
      while (!this.failure) {
        this.again = false
        if (this.waiters.some((waiter) => waiter.target <= this.written)) {
          await this.sync()
        } else if (this.queue.lines !== 0) {
          await this.writeBatch()
        } else {
          break
        }
      }
    } catch (error) {
      this.fail(
        fsError(error, {
          operation: 'write',
          file: this.file,
          doing: `Writing session "${this.id}"`,
          consequence:
            'Events after the last successful flush are not durable, and every later flush of this session fails. Fix the cause, then load the session again.',
        }),
      )
    }
  }

  /** Writes everything queued (the lines queued meanwhile wait for the next batch). */
  private async writeBatch(): Promise<void> {
    const batch = this.queue.take()
    this.handle ??= await open(this.file, 'a', 0o600)
    for (const bytes of batch.blocks) {
      let offset = 0
      while (offset < bytes.length) {
        const { bytesWritten } = await this.handle.write(bytes, offset, bytes.length - offset)
        offset += bytesWritten
      }
    }
    this.written += batch.lines
    this.queue.release(batch)
  }

  private async sync(): Promise<void> {
    const target = this.written
    if (this.handle) await this.handle.datasync()
    if (this.directoryPending) {
      await syncDirectory(dirname(this.file))
      this.directoryPending = false
    }
    this.synced = target
    const due: FlushWaiter[] = []
    this.waiters = this.waiters.filter((waiter) => (waiter.target <= target ? (due.push(waiter), false) : true))
    for (const waiter of due) waiter.resolve()
  }
}

/**
 * Fsyncs a directory so a newly created entry in it survives a crash. Windows
 * cannot open directories for syncing; there the entry is made durable by the
 * file system's own journal, and the error is ignored.
 */
export async function syncDirectory(directory: string): Promise<void> {
  if (process.platform === 'win32') return
  const handle = await open(directory, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** `syncDirectory` for synchronous callers. */
export function syncDirectorySync(directory: string): void {
  if (process.platform === 'win32') return
  const fd = openSync(directory, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
