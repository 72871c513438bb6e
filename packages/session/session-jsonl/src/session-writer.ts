import { WriteBehind, type AnySessionEvent, type LiveWriter, type Session, type SessionEventMap } from '@deepseek-ai/dsh-session'
import { JsonlPersistenceError, fsError } from './errors'
import { LineBuffer, type QueuedBatch } from './line-buffer'
import type { SessionLock } from './lock'
import { SessionFileStorage } from './session-file-storage'

export interface SessionWriterOptions {
  id: string
  file: string
  lock: SessionLock
  /** The number of events already in the file: the seq the next appended event must carry. */
  persisted: number
  /** The file's size in bytes when the writer opened (0 for a new file). */
  size: number
  /** The file holds no event yet: its directory entry is synced on the first flush (see `SessionFileStorage`). */
  creates: boolean
  /** How long queued lines may wait before they are written (without fsync). */
  flushIntervalMs: number
  /** Queued lines that make a batch: reaching it writes at once instead of waiting for the timer. */
  batchLines: number
  /** Told once when the writer stops after a failure (to log it: the failure may happen with no flush waiting). */
  onFail?(error: JsonlPersistenceError): void
}

/**
 * The one writer of one session file (it holds the session's lock): a
 * `WriteBehind` (dsh-session: batching, flush coalescing, sticky failure,
 * close) over a queue of serialized lines (`LineBuffer`, bytes) and the file
 * (`SessionFileStorage`), plus what this backend records about the file's
 * end for listings and for the next writer (`size`, `meta`, the last type and
 * time, see `Handover`).
 *
 * Any write or sync error stops the writer for good: every pending and later
 * flush rejects with the same `JsonlPersistenceError`, whose code names the
 * cause (`NO_SPACE`, `READ_ONLY`, `PERMISSION_DENIED`, `NOT_A_FILE`, else
 * `WRITE_FAILED`) and whose message names the file; loading the session
 * again drops the torn tail (into a sidecar) and continues from the last
 * durable event.
 */
export class SessionWriter implements LiveWriter {
  /** The live session this writer serves; `undefined` for a writer opened by a direct `append()`, and once its session was disposed. */
  owner: Session | undefined
  /** The file's size once everything queued so far is written. */
  size: number
  /** The session's `session/meta` data, once seq 0 has been queued (for listings before the first write). */
  meta: SessionEventMap['session/meta'] | undefined
  /** The type and time of the last queued event (recorded in the handover on close). */
  lastType: string | undefined
  lastTime: number | undefined

  private readonly queue = new LineBuffer()
  private readonly behind: WriteBehind<QueuedBatch>

  constructor(private readonly options: SessionWriterOptions) {
    this.size = options.size
    const { id, file } = options
    const storage = new SessionFileStorage({ id, file, lock: options.lock, creates: options.creates, size: options.size })
    this.behind = new WriteBehind({
      queue: this.queue,
      storage,
      persisted: options.persisted,
      intervalMs: options.flushIntervalMs,
      batchSize: options.batchLines,
      failure: (error) =>
        fsError(error, {
          operation: 'write',
          file,
          doing: `Writing session "${id}"`,
          consequence: `${storage.removed ? 'No line of the session reached the disk, so its file was removed. ' : ''}Events after the last successful flush are not durable, and every later flush of this session fails. Fix the cause, then load the session again.`,
        }),
      onFail: (error) => options.onFail?.(error as JsonlPersistenceError),
    })
  }

  get id(): string {
    return this.options.id
  }

  get file(): string {
    return this.options.file
  }

  /** The seq the next enqueued event must carry. */
  get nextSeq(): number {
    return this.behind.nextSeq
  }

  /** Whether the writer has stopped after a write error. */
  get failed(): JsonlPersistenceError | undefined {
    return this.behind.failed as JsonlPersistenceError | undefined
  }

  /** Whether `close()` or `discard()` has begun. */
  get closed(): boolean {
    return this.behind.closed
  }

  /** Settles when a started `close()` or `discard()` has finished (rejects when the close's last flush failed). */
  whenClosed(): Promise<void> {
    return this.behind.whenClosed()
  }

  /**
   * Queues event `nextSeq` of a live session (`LiveWriter`). Never throws: a
   * failed writer ignores it, and an event that cannot be serialized fails
   * the writer with `WRITE_FAILED` (nothing after the last event is written).
   */
  enqueue(event: AnySessionEvent): void {
    const behind = this.behind
    if (behind.failed) return
    try {
      this.size += this.queue.addEvent(event)
    } catch (error) {
      behind.fail(
        new JsonlPersistenceError(
          'WRITE_FAILED',
          `Event ${event.seq} (${event.type}) of session "${this.id}" cannot be serialized as JSON; nothing after seq ${event.seq - 1} will be written.`,
          { file: this.file, cause: error },
        ),
      )
      return
    }
    behind.queued()
    this.note(event)
  }

  /** Queues the line of a direct append's event, serialized (and checked) beforehand. */
  enqueueLine(event: AnySessionEvent, line: string): void {
    this.size += this.queue.addLine(line)
    this.behind.queued()
    this.note(event)
  }

  /** Resolves once every event enqueued before the call is written and fsynced; rejects with the writer's failure. */
  flush(): Promise<void> {
    return this.behind.flush()
  }

  /** Drains, fsyncs, closes the file and releases the lock (also after a failure, which is then the rejection). */
  close(): Promise<void> {
    return this.behind.close()
  }

  /** Drops whatever is queued, closes the file and releases the lock; pending flushes reject with `WRITE_FAILED` giving `reason`. */
  discard(reason: string): Promise<void> {
    return this.behind.discard(new JsonlPersistenceError('WRITE_FAILED', `Session "${this.id}": ${reason}; its unwritten events were dropped.`, { file: this.file }))
  }

  private note(event: AnySessionEvent): void {
    if (event.seq === 0) this.meta = event.data as SessionEventMap['session/meta']
    this.lastType = event.type
    this.lastTime = event.time
  }
}
