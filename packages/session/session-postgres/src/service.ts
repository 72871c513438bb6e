import { hostname } from 'node:os'
import { randomUUID } from 'node:crypto'
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
import { connect, tablesOf, type Sql, type Tables } from './database'
import { PostgresPersistenceError } from './errors'
import { eventTypeCatalog } from './event-types'
import { liveRows } from './live-rows'
import { migrate } from './migrations'
import { SessionStore } from './session-store'
import { watchSession, type WatchOptions } from './watch-session'

/** Node's timers hold at most 2^31 − 1 ms; a longer delay fires after 1 ms instead (a write per event). */
const MAX_TIMER_MS = 2 ** 31 - 1

/** The longest lease TTL R-PG-2 allows. */
export const MAX_LEASE_TTL_MS = 3000

/**
 * `ctx.sessionPersistence` on PostgreSQL, for sessions shared by many
 * processes on many hosts (R-PG-1…3). Tables live in one schema (`schema`,
 * created and migrated on start, idempotently); each event is one row
 * holding the exact line dsh-session-jsonl would write.
 *
 * The plugin wires itself to every live session like dsh-session-jsonl
 * (dsh-session's `persistLiveSessions`): events are written behind, each
 * write one committed transaction; `ctx.sessions.flush(session)` resolves
 * once everything before it is committed. One process writes a session at a
 * time: it holds the session's lease (`{ holder, epoch, expiresAt }`,
 * renewed every third of `leaseTtlMs`), every write checks the epoch in its
 * transaction, and another process takes over only after the lease expired,
 * raising the epoch (which fences the former holder for good). A second
 * process loading a held session gets `SESSION_LOCKED`.
 *
 * `load(id)` takes the lease and keeps it for the writer that resumes the
 * session in this process (call `release(id)` to give it back when you only
 * read); `watch(id)` follows a session without the lease.
 */
export class PostgresSessionPersistence extends Service implements SessionPersistence {
  static readonly Config: Schema<PostgresSessionPersistence.Config> = Schema.object({
    url: Schema.string()
      .required()
      .description('The connection string, e.g. postgres://user:password@host:5432/database. Never logged.'),
    schema: Schema.string().default('dsh').description('The schema that holds the tables (created and migrated on start).'),
    leaseTtlMs: Schema.natural()
      .min(300)
      .max(MAX_LEASE_TTL_MS)
      .default(MAX_LEASE_TTL_MS)
      .description('How long a lease lasts without renewal; another process may take a session over this long after its holder stopped. At most 3000.'),
    flushIntervalMs: Schema.natural()
      .max(MAX_TIMER_MS)
      .default(100)
      .description('How long appended events may wait before they are written (one transaction per write). A flush commits at once.'),
    batchSize: Schema.natural().min(1).default(1000).description('Queued events that are written at once instead of waiting for the interval.'),
    poolSize: Schema.natural().min(1).default(4).description('Connections in the pool (a watcher uses one more).'),
    holder: Schema.string().description('This process\'s name in lease rows (default: host:pid:random).'),
  })

  /** This process's name in the lease rows. */
  readonly holder: string
  private readonly sql: Sql
  private readonly tables: Tables
  private readonly store: SessionStore
  private readonly ready: Promise<number>
  /** Aborted when the plugin goes: every watch ends before the pool does. */
  private readonly closing = new AbortController()

  constructor(ctx: Context, config: PostgresSessionPersistence.Config) {
    super(ctx, 'sessionPersistence')
    const logger = ctx.logger('session-postgres')
    const warn = (error: unknown) => logger.warn(error)
    const leaseTtlMs = config.leaseTtlMs ?? MAX_LEASE_TTL_MS
    if (!config.url) throw new PostgresPersistenceError('INVALID_CONFIG', 'No connection string: set `url` (e.g. postgres://user:password@host:5432/database).')
    if (leaseTtlMs > MAX_LEASE_TTL_MS) {
      throw new PostgresPersistenceError('INVALID_CONFIG', `leaseTtlMs is ${leaseTtlMs}; a lease may last at most ${MAX_LEASE_TTL_MS} ms (R-PG-2).`)
    }
    this.tables = tablesOf(config.schema ?? 'dsh')
    this.holder = config.holder ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
    this.sql = connect({ url: config.url, max: config.poolSize ?? 4, leaseTtlMs, applicationName: 'dsh-session-postgres' })
    const ready = (this.ready = migrate(this.sql, this.tables))
    // Every call awaits `ready` and rejects with its failure; the log says so once.
    ready.catch(warn)
    const sessions = () => ctx.get('sessions')
    this.store = new SessionStore({
      sql: this.sql,
      tables: this.tables,
      ready,
      holder: this.holder,
      leaseTtlMs,
      flushIntervalMs: config.flushIntervalMs ?? 100,
      batchSize: config.batchSize ?? 1000,
      types: eventTypeCatalog((type) => sessions()?.typeInfo(type)?.type),
      isLive: (id) => sessions()?.get(id) !== undefined,
      warn,
    })
    persistLiveSessions(ctx, liveRows(this.store, this.sql, this.closing, warn))
  }

  /** The schema the tables live in. */
  get schema(): string {
    return this.tables.schema
  }

  /**
   * Queues events of session `id` (write-behind); `flush(id)` commits them.
   * The first append of a new session starts with its `session/meta` at seq
   * 0 and takes the session's lease with its first write; a stored session
   * is continued only after `load(id)` in this process. Rejects with
   * `INVALID_APPEND` for events that do not continue the log and
   * `SESSION_LOCKED` for a session live in this process; a lease another
   * process holds, or a stored session under a new log's id, fail the first
   * write (`SESSION_LOCKED`, `SESSION_EXISTS`), so the flush rejects.
   */
  append(id: SessionId, events: readonly AnySessionEvent[]): Promise<void> {
    return this.store.append(id, events)
  }

  /** Resolves once everything appended to `id` before the call is committed. */
  flush(id: SessionId): Promise<void> {
    return this.store.flush(id)
  }

  /**
   * Takes the session's lease, streams its events, repairs a crash exactly
   * as dsh-session-jsonl does (the repairs committed in one transaction) and
   * returns the whole log; the lease stays with this process for the writer
   * that continues the session (`release(id)` gives it back). Rejects with
   * `SESSION_NOT_FOUND`, `SESSION_LOCKED` (another process's lease is live, or
   * the session is live here), `CORRUPT_SESSION`, `UNKNOWN_TYPE`,
   * `UNSUPPORTED_VERSION` or `DATABASE_FAILED`.
   */
  load(id: SessionId, options?: SessionLoadOptions): Promise<LoadedSession> {
    return this.store.load(id, options)
  }

  /** The stored sessions, most recently written first: one query on the `updated_at` index. */
  list(): Promise<PersistedSessionInfo[]> {
    return this.store.list()
  }

  /** Whether session `id` is stored (or has events appended in this process). */
  exists(id: SessionId): Promise<boolean> {
    return this.store.exists(id)
  }

  /**
   * Removes session `id` (its events and lease). Rejects with `SESSION_LIVE`
   * when it is live in this process, `SESSION_LOCKED` when another process
   * holds it, `SESSION_NOT_FOUND` when there is nothing to delete.
   */
  delete(id: SessionId): Promise<void> {
    return this.store.delete(id)
  }

  /** Commits and gives back what this process holds of `id` (a direct writer, a loaded session's lease). */
  release(id: SessionId): Promise<void> {
    return this.store.release(id)
  }

  /**
   * Follows session `id` live without its lease (R-PG-3): every committed
   * event from `fromSeq` on, in order, then each new one as its transaction
   * commits, until `signal` aborts, the loop breaks or the plugin is
   * disposed (the iteration then ends).
   */
  watch(id: SessionId, options: WatchOptions = {}): AsyncGenerator<AnySessionEvent, void, undefined> {
    const signal = options.signal ? AbortSignal.any([options.signal, this.closing.signal]) : this.closing.signal
    return watchSession(this.sql, this.tables, id, { ...options, signal }, this.ready)
  }
}

export namespace PostgresSessionPersistence {
  export interface Config {
    /** The connection string (never logged). */
    url: string
    /** The schema of the tables (default `dsh`). */
    schema?: string
    /** The lease TTL in ms (default and maximum 3000). */
    leaseTtlMs?: number
    /** How long appended events may wait before they are written, in ms (default 100). */
    flushIntervalMs?: number
    /** Queued events written at once (default 1000). */
    batchSize?: number
    /** Connections in the pool (default 4). */
    poolSize?: number
    /** This process's name in lease rows (default `host:pid:random`). */
    holder?: string
  }
}
