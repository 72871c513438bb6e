import Schema from 'schemastery'
import {
  persistLiveSessions,
  type AnySessionEvent,
  type LoadedSession,
  type PersistedSessionInfo,
  type SessionId,
  type SessionLoadOptions,
  type SessionPersistence,
} from '@deepseek-ai/dsh-session'
import { Context, Service } from './cordis'
import { eventTypeCatalog } from './event-types'
import { liveFiles } from './live-files'
import { resolveDirectory } from './session-paths'
import { SessionFiles } from './session-files'

/** Node's timers hold at most 2^31 − 1 ms; a longer delay fires after 1 ms instead (a write per event). */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * `ctx.sessionPersistence` on JSONL files: one file per session
 * (`<directory>/<id>.jsonl`), one event per line, `session/meta` first.
 *
 * The plugin wires itself to every live session through global listeners
 * (mount it once, in the root context):
 * - `session/created` takes the session's lock synchronously (a session
 *   another writer holds is vetoed with `SESSION_LOCKED`) and queues the
 *   events not yet on disk;
 * - `session/event` queues each new event (write-behind: written in batches
 *   on a timer of `flushIntervalMs`);
 * - `session/flush` writes and fsyncs, so after `ctx.sessions.flush(session)`
 *   resolves a crash loses nothing before it (R-PER-1);
 * - `session/disposed` drains, fsyncs and releases the lock.
 *
 * It claims each live session it writes (`ctx.sessions.claim`): once the
 * plugin is unplugged while a session lives, that session's flushes reject
 * with `PERSISTENCE_DETACHED` instead of resolving with nobody writing.
 *
 * Disposing the plugin closes every file it writes. When the teardown also
 * takes the sessions (the whole app is disposed: an ancestor fiber unloads,
 * the session store with it), the plugin first waits until each live session
 * it writes has been disposed by its owner, still writing and flushing, so
 * the tail a settling agent loop appends (aborted tool results, `turn/end`)
 * reaches the file whatever the mount order. Unplugged alone, it closes at
 * once and the sessions live on unwritten (and their flushes say so).
 *
 * The `SessionPersistence` methods also work without live sessions (tools,
 * tests, other stores): `append()` opens the file for writing and holds its
 * lock until `release(id)`, `load(id)`, `delete(id)` or the plugin's disposal.
 */
export class JsonlSessionPersistence extends Service implements SessionPersistence {
  static readonly Config: Schema<JsonlSessionPersistence.Config> = Schema.object({
    directory: Schema.string()
      .required()
      .description('Where session files live (one <id>.jsonl per session). A leading ~ is the home directory. Created on first write.'),
    flushIntervalMs: Schema.natural()
      .max(MAX_TIMER_MS)
      .default(100)
      .description('How long appended events may wait in memory before they are written (not fsynced). A flush writes and fsyncs at once.'),
  })

  private readonly files: SessionFiles

  constructor(ctx: Context, config: JsonlSessionPersistence.Config) {
    // Checked before the service is registered: a refused configuration provides nothing.
    const directory = resolveDirectory(config.directory)
    super(ctx, 'sessionPersistence')
    const logger = ctx.logger('session-jsonl')
    // `ctx.sessions` is optional (the backend also works on its own), so it is looked up, not injected.
    const sessions = () => ctx.get('sessions')
    const warn = (error: unknown) => logger.warn(error)
    const files = (this.files = new SessionFiles({
      directory,
      flushIntervalMs: config.flushIntervalMs ?? 100,
      types: eventTypeCatalog((type) => sessions()?.typeInfo(type)?.type),
      isLive: (id) => sessions()?.get(id) !== undefined,
      warn,
    }))
    // The live write-behind: dsh-session's wiring for any backend (global listeners, the untraced
    // `session/event` observer, claims, and the shutdown that keeps the tail), over this backend's
    // writers.
    persistLiveSessions(ctx, liveFiles(files, warn))
  }

  /** The absolute session directory. */
  get directory(): string {
    return this.files.directory
  }

  /**
   * Queues events of session `id` (write-behind); `flush(id)` makes them
   * durable. The events must continue the log: the first append of a new
   * session starts with its `session/meta` at seq 0; an existing file is
   * continued only after `load(id)` in this process, from the seq after its
   * last event. Rejects with `INVALID_APPEND` (queueing nothing) for events
   * that do not continue the log or are not serializable, `SESSION_LOCKED`
   * for a session another writer holds or that is live in this process,
   * `SESSION_EXISTS` for an existing file this process has not loaded.
   */
  append(id: SessionId, events: readonly AnySessionEvent[]): Promise<void> {
    return this.files.append(id, events)
  }

  /** Resolves once everything appended to `id` before the call is durable (fsynced). */
  flush(id: SessionId): Promise<void> {
    return this.files.flush(id)
  }

  /**
   * Reads session `id` back (streaming, line by line), repairs a crash and
   * returns the whole log. A torn last line is truncated away and reported in
   * `warnings`; crash repairs (R-PER-3) are appended to the file, fsynced and
   * reported in `repairs`. Rejects with `SESSION_NOT_FOUND`, `CORRUPT_SESSION`
   * (naming file and line), `UNKNOWN_TYPE`, `UNSUPPORTED_VERSION`, or
   * `SESSION_LOCKED` when a live writer (here or in another process) holds
   * the session. A writer opened by `append()` in this process is drained and
   * released first.
   *
   * `signal` abandons the load: it rejects with the signal's reason at once,
   * and the session's lock and its turn in this backend's per-id queue are
   * released at once while the file is being read (the read stops after the
   * 256 KiB read under way), or as soon as a write of the load (the torn-tail
   * cut, the repairs) is done. An abandoned load never writes after the
   * abort.
   */
  load(id: SessionId, options?: SessionLoadOptions): Promise<LoadedSession> {
    return this.files.load(id, options)
  }

  /**
   * The persisted sessions, most recently written first, from each file's
   * first line and its `stat` (no file is read whole). Sessions appended in
   * this process but not written yet are included; files that are not
   * sessions are skipped.
   */
  list(): Promise<PersistedSessionInfo[]> {
    return this.files.list()
  }

  /** Whether session `id` has a complete first line on disk, or events appended in this process. */
  exists(id: SessionId): Promise<boolean> {
    return this.files.exists(id)
  }

  /**
   * Removes session `id`'s file. Rejects with `SESSION_LIVE` when the session
   * is live in this process, `SESSION_LOCKED` when another process writes it,
   * `SESSION_NOT_FOUND` when there is nothing to delete. Events appended
   * through `append()` and not written yet are dropped.
   */
  delete(id: SessionId): Promise<void> {
    return this.files.delete(id)
  }

  /**
   * Drains, fsyncs and releases a session opened by `append()`, so another
   * process may write it. Harmless for an id with no open writer. A live
   * session is released by its disposal instead (rejects with `SESSION_LIVE`).
   */
  release(id: SessionId): Promise<void> {
    return this.files.release(id)
  }

  /** The file that holds (or would hold) session `id`. */
  fileOf(id: SessionId): string {
    return this.files.fileOf(id)
  }
}

export namespace JsonlSessionPersistence {
  export interface Config {
    /** Where session files live; a leading `~` is the home directory. */
    directory: string
    /** How long appended events may wait in memory before they are written, in ms (default 100). */
    flushIntervalMs?: number
  }
}
