import { SessionError } from './errors'
import { loadRepaired } from './backend/load-repaired'
import type { LoadedSession, PersistedSessionInfo, SessionLoadOptions, SessionPersistence } from './persistence'
import { SessionId, type AnySessionEvent, type SessionEvent } from './types'

/** The durable part of a memory backend: one list of JSON records per session. */
interface DurableRecords {
  readonly sessions: Map<string, { lines: string[]; updatedAt: number }>
}

/**
 * A `SessionPersistence` that keeps sessions in memory, for tests and demos.
 * It behaves like a real backend: events are serialized to JSON on `append`
 * (so a lossy value would show), kept pending until `flush`, and only flushed
 * records survive `reopen()`, which simulates a crash and a restart. `load`
 * parses fresh objects and runs crash repair (`loadRepaired`), appending the
 * repairs durably.
 *
 * It stores; it does not listen. Mount `memoryPersistence` to provide it as
 * `ctx.sessionPersistence` and wire it to `ctx.sessions`.
 */
export class MemorySessionPersistence implements SessionPersistence {
  // Shared with the instances `reopen()` returns; never replaced otherwise.
  private durable: DurableRecords = { sessions: new Map() }
  private readonly pending = new Map<string, string[]>()

  /**
   * A new backend over the same durable records, as a restarted process would
   * see them: whatever was appended but not flushed is gone.
   */
  reopen(): MemorySessionPersistence {
    const next = new MemorySessionPersistence()
    next.durable = this.durable
    return next
  }

  async append(id: SessionId, events: readonly AnySessionEvent[]): Promise<void> {
    checkId(id)
    let lines = this.pending.get(id)
    if (!lines) this.pending.set(id, (lines = []))
    for (const event of events) lines.push(JSON.stringify(event))
  }

  async flush(id: SessionId): Promise<void> {
    checkId(id)
    const lines = this.pending.get(id)
    if (!lines) return
    this.pending.delete(id)
    let record = this.durable.sessions.get(id)
    if (!record) this.durable.sessions.set(id, (record = { lines: [], updatedAt: 0 }))
    for (const line of lines) record.lines.push(line)
    record.updatedAt = Date.now()
  }

  /**
   * Reads a flushed session back (fresh objects, chunks packed as they are
   * parsed, as a real backend returns them) and repairs a crash, appending
   * the repairs durably (`loadRepaired`). Records are stored whole, so
   * nothing is ever torn here: no warnings. An aborted `signal` rejects with
   * its reason and appends nothing.
   */
  async load(id: SessionId, options: SessionLoadOptions = {}): Promise<LoadedSession> {
    const record = this.record(id)
    return loadRepaired(
      id,
      {
        read: async (log) => {
          for (const line of record.lines) log.push(JSON.parse(line))
        },
        appendRepairs: async (events) => {
          for (const event of events) record.lines.push(JSON.stringify(event))
          record.updatedAt = Date.now()
        },
      },
      options.signal === undefined ? {} : { signal: options.signal },
    )
  }

  async list(): Promise<PersistedSessionInfo[]> {
    const out: PersistedSessionInfo[] = []
    for (const [id, record] of this.durable.sessions) {
      const meta = (JSON.parse(record.lines[0]!) as SessionEvent<'session/meta'>).data
      const info: PersistedSessionInfo = { id: SessionId(id), createdAt: meta.createdAt, updatedAt: record.updatedAt }
      if (meta.cwd !== undefined) info.cwd = meta.cwd
      if (meta.parentSession !== undefined) info.parentSession = meta.parentSession
      out.push(info)
    }
    return out
  }

  async exists(id: SessionId): Promise<boolean> {
    return this.durable.sessions.has(id)
  }

  async delete(id: SessionId): Promise<void> {
    this.record(id)
    this.durable.sessions.delete(id)
    this.pending.delete(id)
  }

  private record(id: string) {
    checkId(id)
    const record = this.durable.sessions.get(id)
    if (!record) throw new SessionError('SESSION_NOT_FOUND', `no session "${id}" is stored (nothing was flushed under this id)`)
    return record
  }
}

function checkId(id: unknown): void {
  if (typeof id !== 'string' || id.length === 0) throw new SessionError('INVALID_ARGUMENT', 'a session id must be a non-empty string')
}
