import { unlink } from 'node:fs/promises'
import type {
  AnySessionEvent,
  LoadedSession,
  PersistedSessionInfo,
  Session,
  SessionId,
  SessionLoadOptions,
  SessionPersistence,
} from '@deepseek-ai/dsh-session'
import { serializeAppend } from './append-check'
import { JsonlPersistenceError, errnoCode, fsError } from './errors'
import type { EventTypeCatalog } from './event-types'
import { readFirstLine } from './first-line'
import { handovers } from './handover'
import { listSessions } from './list-sessions'
import { loadSessionFile } from './load-session-file'
import { acquireLock } from './lock'
import { openWriter } from './open-writer'
import { directoryExists, regularFileAt } from './path-state'
import { PerIdQueue } from './per-id-queue'
import { notFound } from './read-session-file'
import { assertSafeSessionId, sessionPaths, type SessionPaths } from './session-paths'
import type { SessionWriter } from './session-writer'
import { syncDirectory } from './sync-directory'

export interface SessionFilesOptions {
  /** The absolute session directory. */
  directory: string
  flushIntervalMs: number
  types: EventTypeCatalog
  /** Whether a session is live in this process beyond the writers this backend holds (e.g. in `ctx.sessions`). */
  isLive(id: string): boolean
  /**
   * Reports what nobody awaits: a write failure as it happens (flushes reject
   * with it later), a background close that failed, a live session that
   * cannot be written, a lock file that could not be removed.
   */
  warn(error: unknown): void
}

/**
 * The JSONL backend's persistence API (`SessionPersistence`), without Cordis:
 * `JsonlSessionPersistence` is its service facade (calls through a Cordis
 * service proxy cost microseconds per property access, so the work happens
 * on this plain object).
 *
 * It keeps one `SessionWriter` per session file it writes, either for a live
 * session (opened through `liveFiles`, the live write-behind) or for direct
 * `append()` calls, and serializes `load`/`delete`/`release` per id
 * (`PerIdQueue`). Loading and crash repair are `loadSessionFile`'s.
 */
export class SessionFiles implements SessionPersistence {
  readonly directory: string
  private readonly flushIntervalMs: number
  private readonly types: EventTypeCatalog
  private readonly writers = new Map<string, SessionWriter>()
  /** Per-id queue of `load`/`delete`/`release`, so they never interleave on one file. */
  private readonly exclusive = new PerIdQueue()

  constructor(private readonly options: SessionFilesOptions) {
    this.directory = options.directory
    this.flushIntervalMs = options.flushIntervalMs
    this.types = options.types
  }

  // ---- SessionPersistence ----------------------------------------------------------------

  /** See `JsonlSessionPersistence.append`. */
  async append(id: SessionId, events: readonly AnySessionEvent[]): Promise<void> {
    assertSafeSessionId(id)
    if (events.length === 0) return
    await this.exclusive.pending(id)
    let writer = this.writers.get(id)
    if (writer?.owner) throw liveError(id)
    if (writer?.closed) {
      // Closing after its session was disposed: continue from its handover once it is done.
      await writer.whenClosed().catch(() => {})
      writer = this.writers.get(id)
    }
    const lines = serializeAppend(id, events, writer?.nextSeq)
    writer ??= this.openWriter(id, events[0]!.seq)
    if (writer.failed) throw writer.failed
    for (let i = 0; i < events.length; i++) writer.enqueueLine(events[i]!, lines[i]!)
  }

  /** Resolves once everything appended to `id` before the call is durable (fsynced). */
  async flush(id: SessionId): Promise<void> {
    assertSafeSessionId(id)
    const writer = this.writers.get(id)
    if (!writer) return
    // A closing writer drains (or, for a dropped session, discards) on its own: wait for it.
    await (writer.closed ? writer.whenClosed() : writer.flush())
  }

  /** See `JsonlSessionPersistence.load`. */
  load(id: SessionId, options: SessionLoadOptions = {}): Promise<LoadedSession> {
    assertSafeSessionId(id)
    const { signal } = options
    return this.exclusive.run(id, (letGo) => this.loadNow(id, signal, letGo), signal)
  }

  /** See `JsonlSessionPersistence.list`. */
  list(): Promise<PersistedSessionInfo[]> {
    return listSessions(this.directory, this.writers.values())
  }

  /** Whether session `id` has a complete first line on disk, or events appended in this process. */
  async exists(id: SessionId): Promise<boolean> {
    assertSafeSessionId(id)
    const writer = this.writers.get(id)
    if (writer && writer.nextSeq > 0 && !writer.closed) return true
    const file = this.paths(id).file
    // A directory in the file's place is not a missing session: `NOT_A_FILE`.
    if (!regularFileAt(file, `the file of session "${id}"`)) return false
    try {
      return (await readFirstLine(file)) !== undefined
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return false
      throw fsError(error, { operation: 'read', file, doing: `Reading the first line of session "${id}"` })
    }
  }

  /** See `JsonlSessionPersistence.delete`. */
  delete(id: SessionId): Promise<void> {
    assertSafeSessionId(id)
    return this.exclusive.run(id, () => this.deleteNow(id))
  }

  // ---- Beyond the contract --------------------------------------------------------------

  /** See `JsonlSessionPersistence.release`. */
  release(id: SessionId): Promise<void> {
    assertSafeSessionId(id)
    return this.exclusive.run(id, async () => {
      const writer = this.writers.get(id)
      if (writer?.owner) throw new JsonlPersistenceError('SESSION_LIVE', `Session "${id}" is live; it is released when it is disposed.`)
      if (writer) await this.closeWriter(writer)
    })
  }

  /** The file that holds (or would hold) session `id`. */
  fileOf(id: SessionId): string {
    assertSafeSessionId(id)
    return this.paths(id).file
  }

  // ---- Writers (shared by direct appends and the live write-behind, `liveFiles`) ----------

  /**
   * Opens the writer of session `id` (see `openWriter`) and keeps it. Throws
   * `SESSION_LOCKED` when this backend already writes the id (a live session,
   * or a writer still closing).
   */
  openWriter(id: string, firstSeq: number, session?: Session): SessionWriter {
    assertSafeSessionId(id)
    if (this.writers.has(id)) throw liveError(id)
    const writer = openWriter({
      id,
      directory: this.directory,
      paths: this.paths(id),
      firstSeq,
      ...(session === undefined ? {} : { session }),
      flushIntervalMs: this.flushIntervalMs,
      warn: this.options.warn,
    })
    this.writers.set(id, writer)
    return writer
  }

  /** Closes a writer and records what it left on disk, so a later writer can continue it. */
  async closeWriter(writer: SessionWriter): Promise<void> {
    try {
      await writer.close()
      if (writer.nextSeq > 0 && writer.lastType !== undefined) {
        handovers.set(writer.file, { count: writer.nextSeq, size: writer.size, lastType: writer.lastType, lastTime: writer.lastTime! })
      }
    } finally {
      if (this.writers.get(writer.id) === writer) this.writers.delete(writer.id)
    }
  }

  /** Discards a writer's queue and releases its lock, recording nothing. */
  async dropWriter(writer: SessionWriter, reason: string): Promise<void> {
    try {
      await writer.discard(reason)
    } finally {
      if (this.writers.get(writer.id) === writer) this.writers.delete(writer.id)
    }
  }

  /** Closes every writer (the plugin is going); a failure is logged unless it is the writer's own, logged when it happened. */
  async closeAll(): Promise<void> {
    await Promise.all(
      [...this.writers.values()].map((writer) =>
        this.closeWriter(writer).catch((error) => {
          if (error !== writer.failed) this.options.warn(error)
        }),
      ),
    )
  }

  // ---- Loading, deleting ------------------------------------------------------------------

  private async loadNow(id: string, signal: AbortSignal | undefined, letGo: () => void): Promise<LoadedSession> {
    const writer = this.writers.get(id)
    if (writer?.owner) throw liveError(id)
    if (writer) await this.closeWriter(writer).catch(() => {})
    const load = { id, directory: this.directory, paths: this.paths(id), types: this.types, letGo, warn: this.options.warn }
    return loadSessionFile(signal === undefined ? load : { ...load, signal })
  }

  private async deleteNow(id: string): Promise<void> {
    const paths = this.paths(id)
    const writer = this.writers.get(id)
    if (writer?.owner || this.options.isLive(id)) {
      throw new JsonlPersistenceError('SESSION_LIVE', `Session "${id}" is live in this process; dispose it before deleting it.`, {
        file: paths.file,
      })
    }
    let pending = false
    if (writer) {
      pending = writer.nextSeq > 0
      await this.dropWriter(writer, 'it was deleted').catch(() => {})
    }
    const lock = this.lockExisting(id, paths)
    let failure: unknown
    try {
      if (!regularFileAt(paths.file, `the file of session "${id}"`)) {
        if (pending) return
        throw notFound(id, paths.file)
      }
      await unlink(paths.file).catch((error) => {
        if (errnoCode(error) !== 'ENOENT') throw fsError(error, { operation: 'write', file: paths.file, doing: `Deleting session "${id}"` })
      })
      handovers.delete(paths.file)
      await syncDirectory(this.directory).catch((error) => {
        throw fsError(error, { operation: 'write', file: this.directory, doing: `Syncing the directory after deleting session "${id}"` })
      })
    } catch (error) {
      failure = error
      throw error
    } finally {
      const released = lock.releaseQuietly()
      if (released && failure === undefined) throw released
    }
  }

  /**
   * Takes the lock of a session that should already exist; `SESSION_NOT_FOUND`
   * when its directory does not exist, `NOT_A_DIRECTORY` when a file is in its place.
   */
  private lockExisting(id: string, paths: SessionPaths) {
    if (!directoryExists(this.directory)) throw notFound(id, paths.file)
    return acquireLock(paths, id)
  }

  private paths(id: string): SessionPaths {
    return sessionPaths(this.directory, id)
  }
}

function liveError(id: string): JsonlPersistenceError {
  return new JsonlPersistenceError(
    'SESSION_LOCKED',
    `Session "${id}" is already being written in this process (a live session with this id, or a writer still closing). Dispose it, or wait for its disposal, before opening it again.`,
  )
}
