import { WriteBehind, type AnySessionEvent, type LiveWriter } from '@deepseek-ai/dsh-session'
import { PostgresPersistenceError, writeFailure } from './errors'
import { serializeEvent } from './line-format'
import { RowQueue } from './row-queue'
import type { SessionStorage } from './session-storage'

export interface SessionWriterOptions {
  id: string
  /** Events the database already holds: the seq of the first event queued. */
  persisted: number
  storage: (queue: RowQueue) => SessionStorage
  flushIntervalMs: number
  batchSize: number
  /** Told once when the writer stops after a failure. */
  onFail(error: Error): void
}

/**
 * One session's writer: each event is encoded into its stored text as it
 * arrives (`serializeEvent`) and written behind by dsh-session's
 * `WriteBehind` (batching, flush coalescing, sticky failure), one committed
 * transaction per write.
 */
export class SessionWriter implements LiveWriter {
  readonly id: string
  private readonly queue: RowQueue
  private readonly behind: WriteBehind<ReturnType<RowQueue['take']>>

  constructor(options: SessionWriterOptions) {
    this.id = options.id
    this.queue = new RowQueue(options.persisted)
    const storage = options.storage(this.queue)
    this.behind = new WriteBehind({
      queue: this.queue,
      storage,
      persisted: options.persisted,
      intervalMs: options.flushIntervalMs,
      batchSize: options.batchSize,
      failure: (error) => writeFailure(error, options.id),
      onFail: options.onFail,
    })
  }

  get nextSeq(): number {
    return this.behind.nextSeq
  }

  get failed(): Error | undefined {
    return this.behind.failed
  }

  get closed(): boolean {
    return this.behind.closed
  }

  enqueue(event: AnySessionEvent): void {
    if (this.behind.failed || this.behind.closed) return
    if (event.seq !== this.behind.nextSeq) {
      this.behind.fail(
        new PostgresPersistenceError('INVALID_APPEND', `Session "${this.id}" expected seq ${this.behind.nextSeq} next, got ${event.seq}; nothing more is written.`, {
          id: this.id,
          seq: event.seq,
        }),
      )
      return
    }
    let line: string
    try {
      line = serializeEvent(event)
    } catch (error) {
      this.behind.fail(
        new PostgresPersistenceError('INVALID_APPEND', `Event ${event.seq} (${event.type}) of session "${this.id}" cannot be serialized as JSON; nothing more is written.`, {
          id: this.id,
          seq: event.seq,
          cause: error,
        }),
      )
      return
    }
    this.queue.push(line)
    this.behind.queued()
  }

  flush(): Promise<void> {
    return this.behind.flush()
  }

  /** Stops the writer for good with `error` (a lease the heartbeat found taken over). */
  fail(error: Error): void {
    this.behind.fail(error)
  }

  close(): Promise<void> {
    return this.behind.close()
  }

  discard(error: Error): Promise<void> {
    return this.behind.discard(error)
  }

  whenClosed(): Promise<void> {
    return this.behind.whenClosed()
  }
}
