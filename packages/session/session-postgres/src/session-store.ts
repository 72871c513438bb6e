import type {
  AnySessionEvent,
  LoadedSession,
  PersistedSessionInfo,
  Session,
  SessionId,
  SessionLoadOptions,
  SessionPersistence,
} from '@deepseek-ai/dsh-session'
import type { SessionFacts } from './append-rows'
import type { Sql, Tables } from './database'
import { PostgresPersistenceError, databaseError } from './errors'
import type { EventTypeCatalog } from './event-types'
import { acquireLease, releaseLease, type HeldLease } from './lease'
import { LeaseKeeper } from './lease-keeper'
import { leaseForLoad, loadSession, notFound } from './load-session'
import type { RowBatch } from './row-queue'
import { SessionStorage } from './session-storage'
import { SessionWriter } from './session-writer'

export interface SessionStoreOptions {
  sql: Sql
  tables: Tables
  /** Resolves once the schema is migrated; every statement waits for it. */
  ready: Promise<unknown>
  /** This process's name in the lease rows. */
  holder: string
  leaseTtlMs: number
  flushIntervalMs: number
  batchSize: number
  types: EventTypeCatalog
  /** Whether a session is live in this process beyond the writers this store holds (in `ctx.sessions`). */
  isLive(id: string): boolean
  warn(error: unknown): void
}

/** A session this process loaded and still holds the lease of, for the writer that continues it. */
interface Handover {
  lease: HeldLease
  count: number
  lastType: string
  lastTime: number
}

/**
 * The PostgreSQL backend's persistence API without Cordis (the service is
 * its facade). It keeps one `SessionWriter` per session it writes, for a live
 * session (`openLive`) or for direct `append()` calls, and the handovers of
 * the sessions it loaded: the lease a load takes is kept (and renewed) until
 * a writer continues the session, `release(id)`, `delete(id)` or the end.
 */
export class SessionStore implements SessionPersistence {
  readonly keeper: LeaseKeeper
  private readonly writers = new Map<string, SessionWriter>()
  /** Writers serving a live session (not direct appends). */
  private readonly liveWriters = new WeakSet<SessionWriter>()
  private readonly handovers = new Map<string, Handover>()
  /** Per-id chain of `load`/`delete`/`release`, so they never interleave on one session. */
  private readonly exclusive = new Map<string, Promise<unknown>>()
  private closing = false

  constructor(private readonly options: SessionStoreOptions) {
    this.keeper = new LeaseKeeper(options.sql, options.tables, options.holder, options.leaseTtlMs, options.warn)
  }

  // ---- the live write-behind --------------------------------------------------------------

  /**
   * Takes on a live session, synchronously (a throw vetoes its publication):
   * a resumed session continues the handover of the load that read it; a new
   * one (nothing loaded) takes its lease with its first write.
   */
  openLive(session: Session): SessionWriter {
    const id = session.id
    const current = this.writers.get(id)
    if (current && !current.closed) throw busy(id)
    const handover = this.handovers.get(id)
    let writer: SessionWriter
    if (session.loadedLength > 0 || handover !== undefined) {
      if (!handover || !continues(handover, session)) {
        throw new PostgresPersistenceError(
          handover ? 'INVALID_APPEND' : 'SESSION_EXISTS',
          handover
            ? `Live session "${id}" does not continue the log this process loaded (${handover.count} events); load it again.`
            : `Session "${id}" was resumed from events this process did not load from the database; load it with ctx.sessionPersistence.load first.`,
          { id },
        )
      }
      writer = this.newWriter(id, handover.count, handover.lease)
    } else {
      writer = this.newWriter(id, 0, undefined)
    }
    this.liveWriters.add(writer)
    return writer
  }

  /** Drains and closes a live session's writer (releasing its lease). */
  closeWriter(writer: SessionWriter): Promise<void> {
    this.liveWriters.delete(writer)
    return writer.close().finally(() => this.forget(writer))
  }

  /** Drops a vetoed publication's writer: nothing of it is written. */
  dropWriter(writer: SessionWriter, reason: string): Promise<void> {
    this.liveWriters.delete(writer)
    const error = new PostgresPersistenceError('SESSION_LIVE', `Session "${writer.id}" was not written: ${reason}.`, { id: writer.id })
    return writer.discard(error).finally(() => this.forget(writer))
  }

  // ---- SessionPersistence -----------------------------------------------------------------

  async append(id: SessionId, events: readonly AnySessionEvent[]): Promise<void> {
    if (events.length === 0) return
    await this.exclusive.get(id)?.catch(() => {})
    let writer = this.writers.get(id)
    if (writer && this.liveWriters.has(writer)) throw busy(id)
    if (writer?.closed) {
      await writer.whenClosed().catch(() => {})
      writer = this.writers.get(id)
    }
    const first = events[0]!.seq
    if (writer === undefined) {
      const handover = this.handovers.get(id)
      const start = handover?.count ?? 0
      if (first !== start) {
        throw new PostgresPersistenceError(
          'INVALID_APPEND',
          handover
            ? `Session "${id}" continues at seq ${start}, got seq ${first}.`
            : `Session "${id}" was not loaded in this process, so its first append must start with session/meta at seq 0 (got seq ${first}).`,
          { id, seq: first },
        )
      }
      writer = this.newWriter(id, start, handover?.lease)
    } else if (first !== writer.nextSeq) {
      throw new PostgresPersistenceError('INVALID_APPEND', `Session "${id}" continues at seq ${writer.nextSeq}, got seq ${first}.`, { id, seq: first })
    }
    for (const event of events) writer.enqueue(event)
  }

  async flush(id: SessionId): Promise<void> {
    await this.writers.get(id)?.flush()
  }

  async load(id: SessionId, options: SessionLoadOptions = {}): Promise<LoadedSession> {
    const { signal } = options
    signal?.throwIfAborted()
    return this.serially(id, signal, async () => {
      if (this.options.isLive(id) || (this.writers.has(id) && this.liveWriters.has(this.writers.get(id)!))) throw busy(id)
      await this.releaseDirect(id)
      await this.options.ready
      const { sql, tables, holder, leaseTtlMs, types } = this.options
      const load = { sql, tables, id, holder, leaseTtlMs, types, ...(signal === undefined ? {} : { signal }) }
      const held = this.handovers.get(id)
      this.handovers.delete(id)
      let lease: HeldLease | undefined
      try {
        const taken = await leaseForLoad(load)
        lease = taken.lease
        signal?.throwIfAborted()
        // Renewed while the load reads: a long load keeps the session.
        this.keeper.keep(lease, () => {})
        const loaded = await loadSession(load, lease, taken.count)
        const last = loaded.events[loaded.events.length - 1]!
        this.handovers.set(id, { lease, count: loaded.events.length, lastType: last.type, lastTime: last.time })
        this.keeper.keep(lease, (error) => this.lostHandover(id, lease!, error))
        return loaded
      } catch (error) {
        if (lease !== undefined || held !== undefined) await this.letGo(lease ?? held!.lease)
        throw signal?.aborted && error === signal.reason ? error : databaseError(error, `Loading session "${id}"`, id, 'Nothing was changed.')
      }
    })
  }

  async list(): Promise<PersistedSessionInfo[]> {
    await this.options.ready
    const { sql, tables } = this.options
    try {
      const rows = await sql.unsafe<{ id: string; created_at: number; updated_at: number; cwd: string | null; parent_session: string | null }[]>(
        `SELECT id, created_at::float8 AS created_at, updated_at::float8 AS updated_at, cwd, parent_session FROM ${tables.sessions} ORDER BY updated_at DESC`,
      )
      return rows.map((row) => ({
        id: row.id as SessionId,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
        ...(row.cwd === null ? {} : { cwd: row.cwd }),
        ...(row.parent_session === null ? {} : { parentSession: row.parent_session as SessionId }),
      }))
    } catch (error) {
      throw databaseError(error, 'Listing the stored sessions')
    }
  }

  async exists(id: SessionId): Promise<boolean> {
    const writer = this.writers.get(id)
    if (writer !== undefined && writer.nextSeq > 0 && !writer.failed) return true
    await this.options.ready
    const { sql, tables } = this.options
    try {
      const rows = await sql.unsafe(`SELECT 1 FROM ${tables.sessions} WHERE id = $1`, [id])
      return rows.length === 1
    } catch (error) {
      throw databaseError(error, `Looking up session "${id}"`, id)
    }
  }

  async delete(id: SessionId): Promise<void> {
    return this.serially(id, undefined, async () => {
      if (this.options.isLive(id) || (this.writers.has(id) && this.liveWriters.has(this.writers.get(id)!))) {
        throw new PostgresPersistenceError('SESSION_LIVE', `Session "${id}" is live in this process; dispose it before deleting it.`, { id })
      }
      const direct = this.writers.get(id)
      if (direct) {
        this.writers.delete(id)
        await direct.discard(new PostgresPersistenceError('SESSION_NOT_FOUND', `Session "${id}" was deleted.`, { id })).catch(() => {})
      }
      const handover = this.handovers.get(id)
      if (handover) this.keeper.drop(id)
      this.handovers.delete(id)
      await this.options.ready
      const { sql, tables, holder, leaseTtlMs } = this.options
      try {
        await sql.begin(async (tx) => {
          await acquireLease(tx, tables, id, holder, leaseTtlMs)
          const gone = await tx.unsafe(`DELETE FROM ${tables.sessions} WHERE id = $1 RETURNING 1`, [id])
          if (gone.length === 0) throw notFound(id)
          await tx.unsafe(`DELETE FROM ${tables.events} WHERE session_id = $1`, [id])
          await tx.unsafe(`DELETE FROM ${tables.leases} WHERE session_id = $1`, [id])
        })
      } catch (error) {
        throw databaseError(error, `Deleting session "${id}"`, id, 'Nothing was deleted.')
      }
    })
  }

  /** Drains and releases what this process holds of `id` (a direct writer, a loaded session's lease). */
  async release(id: SessionId): Promise<void> {
    return this.serially(id, undefined, async () => {
      const writer = this.writers.get(id)
      if (writer && this.liveWriters.has(writer)) {
        throw new PostgresPersistenceError('SESSION_LIVE', `Session "${id}" is live in this process; it is released when it is disposed.`, { id })
      }
      await this.releaseDirect(id)
      const handover = this.handovers.get(id)
      this.handovers.delete(id)
      if (handover) await this.letGo(handover.lease)
    })
  }

  /** Closes every writer, releases every lease this process holds, and stops the heartbeat. */
  async closeAll(): Promise<void> {
    this.closing = true
    const failures: unknown[] = []
    await Promise.all([...this.writers.values()].map((writer) => writer.close().catch((error) => failures.push(error))))
    this.writers.clear()
    for (const [, handover] of this.handovers) await this.letGo(handover.lease).catch((error) => failures.push(error))
    this.handovers.clear()
    await this.keeper.stop()
    if (failures.length > 0) throw failures[0]
  }

  // ---- internals --------------------------------------------------------------------------

  private newWriter(id: string, persisted: number, lease: HeldLease | undefined): SessionWriter {
    const { sql, tables, holder, leaseTtlMs, ready } = this.options
    this.handovers.delete(id)
    const writer: SessionWriter = new SessionWriter({
      id,
      persisted,
      flushIntervalMs: this.options.flushIntervalMs,
      batchSize: this.options.batchSize,
      onFail: (error) => this.options.warn(error),
      storage: () =>
        new SessionStorage({
          sql,
          tables,
          id,
          holder,
          leaseTtlMs,
          lease,
          ready,
          facts: factsOf,
          onLease: (held) => {
            if (held) this.keeper.keep(held, (error) => writer.fail(error))
            else this.keeper.drop(id)
          },
          settled: () => this.keeper.settled(),
        }),
    })
    if (lease) this.keeper.keep(lease, (error) => writer.fail(error))
    if (this.closing) void writer.discard(new PostgresPersistenceError('SESSION_LIVE', 'The PostgreSQL backend is shutting down.', { id }))
    this.writers.set(id, writer)
    return writer
  }

  private forget(writer: SessionWriter): void {
    if (this.writers.get(writer.id) === writer) this.writers.delete(writer.id)
  }

  /**
   * Closes (drains) a direct writer of `id`, or waits for the close of a
   * disposed live session's writer, if any. A writer that failed is closed
   * all the same; its failure was reported when it happened (and rejected its
   * flushes), and what follows (a load) reads what the database holds.
   */
  private async releaseDirect(id: string): Promise<void> {
    const writer = this.writers.get(id)
    if (writer === undefined || this.liveWriters.has(writer)) return
    try {
      await writer.close()
    } catch (error) {
      if (error !== writer.failed) this.options.warn(error)
    } finally {
      this.forget(writer)
    }
  }

  private async letGo(lease: HeldLease): Promise<void> {
    this.keeper.drop(lease.id)
    await this.keeper.settled()
    const { sql, tables, holder } = this.options
    await releaseLease(sql, tables, lease, holder).catch((error) => this.options.warn(error))
  }

  private lostHandover(id: string, lease: HeldLease, error: Error): void {
    if (this.handovers.get(id)?.lease === lease) this.handovers.delete(id)
    this.options.warn(error)
  }

  private serially<T>(id: string, signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    const previous = this.exclusive.get(id) ?? Promise.resolve()
    const run = previous.catch(() => {}).then(work)
    const tail = run.catch(() => {})
    this.exclusive.set(id, tail)
    void tail.then(() => {
      if (this.exclusive.get(id) === tail) this.exclusive.delete(id)
    })
    if (signal === undefined) return run
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(signal.reason)
      signal.addEventListener('abort', onAbort, { once: true })
      run.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
    })
  }
}

/** The `sessions` row of a new session, from its `session/meta` (the first event of its first batch). */
function factsOf(batch: RowBatch): SessionFacts {
  const meta = JSON.parse(batch.lines[0]!) as { data: { createdAt?: number; cwd?: string; parentSession?: string } }
  const { createdAt, cwd, parentSession } = meta.data
  return {
    createdAt: typeof createdAt === 'number' ? createdAt : Date.now(),
    ...(typeof cwd === 'string' ? { cwd } : {}),
    ...(typeof parentSession === 'string' ? { parentSession } : {}),
  }
}

function continues(handover: Handover, session: Session): boolean {
  if (session.loadedLength !== handover.count) return false
  const last = session.events[handover.count - 1]
  return last !== undefined && last.type === handover.lastType && last.time === handover.lastTime
}

function busy(id: string): PostgresPersistenceError {
  return new PostgresPersistenceError(
    'SESSION_LOCKED',
    `Session "${id}" is being written in this process (it is live, or has a writer); only one writer may hold a session.`,
    { id },
  )
}
