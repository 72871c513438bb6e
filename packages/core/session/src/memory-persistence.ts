import { SessionError } from './errors'
import { serializeEvent } from './backend/event-line'
import type { LiveSessionBackend, LiveWriter } from './backend/live-sessions'
import { loadRepaired } from './backend/load-repaired'
import type { LoadedSession, PersistedSessionInfo, SessionLoadOptions, SessionPersistence } from './persistence'
import type { Session } from './session'
import { SessionId, type AnySessionEvent, type SessionEventMap } from './types'

declare module './errors' {
  interface SessionErrorCodeMap {
    /** Memory backend (as the file backends): a new log (from seq 0) would replace a stored session this backend has not loaded. */
    SESSION_EXISTS: true
    /** Memory backend (as the file backends): the session is already written here, by a live session or by direct appends. */
    SESSION_LOCKED: true
    /** Memory backend (as the file backends): appended events that do not continue the stored log, or are not JSON. */
    INVALID_APPEND: true
  }
}

/** The durable part of a memory backend: one list of JSON records per session. */
interface DurableRecords {
  readonly sessions: Map<string, { lines: string[]; updatedAt: number }>
}

/** The end of a log this backend loaded (or wrote and closed): a writer may continue it there. */
interface Handover {
  count: number
  lastType: string
  lastTime: number
}

/**
 * One session this backend writes, by direct `append`s or for a live session
 * (`owner`). Its lines wait in `pending` until a flush stores them.
 */
class MemoryWriter implements LiveWriter {
  nextSeq: number
  /** How many records the stored log held when this writer last stored (what it continues). */
  persisted: number
  failed: Error | undefined = undefined
  owner: Session | undefined = undefined
  pending: string[] = []
  meta: SessionEventMap['session/meta'] | undefined = undefined
  lastType: string | undefined = undefined
  lastTime = 0
  /** Told once when the writer fails (a live writer logs it: its disposal may be the only write, and nobody awaits that). */
  onFail: ((error: Error) => void) | undefined = undefined

  constructor(
    readonly id: string,
    start: number,
    private readonly backend: MemorySessionPersistence,
  ) {
    this.nextSeq = this.persisted = start
  }

  enqueue(event: AnySessionEvent): void {
    if (this.failed) return
    let line: string
    try {
      line = serializeEvent(event)
    } catch (cause) {
      this.fail(new SessionError('INVALID_APPEND', `Event seq ${event.seq} (${event.type}) of session "${this.id}" is not JSON; nothing from it on is stored.`, { cause }))
      return
    }
    this.push(event, line)
  }

  /** Fails the writer for good (its flushes reject with `error` from now on). */
  fail(error: Error): Error {
    if (this.failed === undefined) {
      this.failed = error
      this.onFail?.(error)
    }
    return this.failed
  }

  push(event: AnySessionEvent, line: string): void {
    if (event.seq === 0) this.meta = event.data as SessionEventMap['session/meta']
    this.pending.push(line)
    this.nextSeq++
    this.lastType = event.type
    this.lastTime = event.time
  }

  flush(): Promise<void> {
    try {
      this.backend[store](this)
      return Promise.resolve()
    } catch (error) {
      return Promise.reject(error)
    }
  }
}

/** The key of the live write-behind `memoryPersistence` wires to `ctx.sessions` (not public API). */
export const liveBackend = Symbol('dsh-session.memory-live-backend')
const store = Symbol('dsh-session.memory-store')

/**
 * A `SessionPersistence` that keeps sessions in memory, for tests and demos.
 * It behaves like dsh-session-jsonl and dsh-session-postgres, so a test that
 * passes on it passes on them: events are serialized on `append` (so a lossy
 * value would show), kept pending until `flush`, and only flushed records
 * survive `reopen()`, which simulates a crash and a restart. `load` drains
 * what was appended to the id, parses fresh objects and runs crash repair
 * (`loadRepaired`), appending the repairs durably.
 *
 * It refuses what they refuse: a new log (from seq 0) over a stored session
 * it has not loaded (`SESSION_EXISTS`: load it first, delete it or pick
 * another id), appends that do not continue the log or are not JSON
 * (`INVALID_APPEND`, queueing nothing), and a second writer of one session
 * (`SESSION_LOCKED`: direct appends to, or a load of, a session that is
 * live here, or a live session over one written by direct appends, until
 * `load` or `release`).
 *
 * It stores; it does not listen. Mount `memoryPersistence` to provide it as
 * `ctx.sessionPersistence` and wire it to `ctx.sessions`.
 */
export class MemorySessionPersistence implements SessionPersistence {
  // Shared with the instances `reopen()` returns; never replaced otherwise.
  private durable: DurableRecords = { sessions: new Map() }
  private readonly writers = new Map<string, MemoryWriter>()
  private readonly handovers = new Map<string, Handover>()
  /** Per id, the end of the chain of `load`/`delete`/`release`, so they never interleave on one session (as in the file backends). */
  private readonly exclusive = new Map<string, Promise<unknown>>()

  /**
   * A new backend over the same durable records, as a restarted process
   * would see them: whatever was appended but not flushed is gone, and so is
   * what this one had loaded (load again before continuing a session).
   */
  reopen(): MemorySessionPersistence {
    const next = new MemorySessionPersistence()
    next.durable = this.durable
    return next
  }

  /**
   * Queues events (stored by `flush`). The first append of a new id starts
   * with its `session/meta` at seq 0; a stored session is continued only
   * after `load(id)`, from the seq after its last event. Rejects, queueing
   * nothing, with `INVALID_APPEND`, `SESSION_EXISTS` or `SESSION_LOCKED`.
   */
  async append(id: SessionId, events: readonly AnySessionEvent[]): Promise<void> {
    checkId(id)
    if (events.length === 0) return
    const pending = this.exclusive.get(id)
    if (pending !== undefined) await pending
    const writer = this.writers.get(id)
    if (writer?.owner) throw locked(id)
    if (writer?.failed) throw writer.failed
    const start = writer ? writer.nextSeq : this.startOf(id, events[0]!.seq)
    const lines = serializeAppend(id, events, start)
    const target = writer ?? this.openWriter(id, start)
    for (let i = 0; i < events.length; i++) target.push(events[i]!, lines[i]!)
  }

  async flush(id: SessionId): Promise<void> {
    checkId(id)
    const writer = this.writers.get(id)
    if (writer) this[store](writer)
  }

  /**
   * Reads a session back (fresh objects, chunks packed as they are parsed,
   * as a real backend returns them) after storing what direct appends left
   * pending, and repairs a crash, appending the repairs durably
   * (`loadRepaired`). Records are stored whole, so nothing is ever torn
   * here: no warnings. Rejects with `SESSION_NOT_FOUND`, or `SESSION_LOCKED`
   * for a session live here. An aborted `signal` rejects with its reason and
   * appends nothing.
   */
  async load(id: SessionId, options: SessionLoadOptions = {}): Promise<LoadedSession> {
    checkId(id)
    options.signal?.throwIfAborted()
    return this.serially(id, () => this.loadNow(id, options))
  }

  private async loadNow(id: SessionId, options: SessionLoadOptions): Promise<LoadedSession> {
    const writer = this.writers.get(id)
    if (writer?.owner) throw locked(id)
    if (writer) {
      // A writer that failed is let go all the same (its failure was reported by its flushes): read what is stored.
      try {
        this.close(writer)
      } catch {}
    }
    const record = this.record(id)
    const loaded = await loadRepaired(
      id,
      {
        read: async (log) => {
          for (const line of record.lines) log.push(JSON.parse(line))
        },
        appendRepairs: async (events) => {
          if (this.durable.sessions.get(id) !== record) throw notFound(id)
          for (const event of events) record.lines.push(serializeEvent(event))
          record.updatedAt = Date.now()
        },
      },
      options.signal === undefined ? {} : { signal: options.signal },
    )
    const last = loaded.events[loaded.events.length - 1]!
    if (this.durable.sessions.get(id) === record) this.handovers.set(id, { count: loaded.events.length, lastType: last.type, lastTime: last.time })
    return loaded
  }

  /** The stored sessions and those appended but not flushed yet, most recently written first. */
  async list(): Promise<PersistedSessionInfo[]> {
    const out: PersistedSessionInfo[] = []
    for (const [id, record] of this.durable.sessions) out.push(infoOf(id, metaOf(record.lines[0]!), record.updatedAt))
    const now = Date.now()
    for (const [id, writer] of this.writers) {
      if (writer.meta && !this.durable.sessions.has(id)) out.push(infoOf(id, writer.meta, now))
    }
    return out.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  /** Whether session `id` is stored, or has events appended here. */
  async exists(id: SessionId): Promise<boolean> {
    const writer = this.writers.get(id)
    if (writer && writer.nextSeq > 0 && !writer.failed) return true
    return this.durable.sessions.has(id)
  }

  /**
   * Removes a stored session, dropping what was appended and not flushed.
   * Rejects with `SESSION_LIVE` for a session live here, `SESSION_NOT_FOUND`
   * when there is nothing to delete.
   */
  async delete(id: SessionId): Promise<void> {
    checkId(id)
    return this.serially(id, async () => {
      const writer = this.writers.get(id)
      if (writer?.owner) throw new SessionError('SESSION_LIVE', `session "${id}" is live in this process; detach it before deleting it`)
      if (writer) this.writers.delete(id)
      this.handovers.delete(id)
      if (!this.durable.sessions.delete(id) && !(writer && writer.nextSeq > 0)) throw notFound(id)
    })
  }

  /**
   * Stores and lets go of what direct appends wrote to `id`, so a live
   * session may take it on (`load` does the same). Harmless for an id with
   * no writer; rejects with `SESSION_LIVE` for a session live here.
   */
  async release(id: SessionId): Promise<void> {
    checkId(id)
    return this.serially(id, async () => {
      const writer = this.writers.get(id)
      if (writer?.owner) throw new SessionError('SESSION_LIVE', `session "${id}" is live; it is released when it is disposed`)
      if (writer) this.close(writer)
    })
  }

  /** Runs `work` after every `load`/`delete`/`release` of `id` asked before it has settled. */
  private serially<T>(id: string, work: () => Promise<T>): Promise<T> {
    const before = this.exclusive.get(id)
    const run = before === undefined ? work() : before.then(work)
    const settled = run.then(noop, noop)
    this.exclusive.set(id, settled)
    void settled.then(() => {
      if (this.exclusive.get(id) === settled) this.exclusive.delete(id)
    })
    return run
  }

  /** The live write-behind over this backend, for `persistLiveSessions` (one per mounted plugin). */
  [liveBackend](name: string, warn: (error: unknown) => void): LiveSessionBackend<MemoryWriter> {
    const mine = new Set<MemoryWriter>()
    const disown = (writer: MemoryWriter) => {
      writer.owner = undefined
      mine.delete(writer)
    }
    return {
      name,
      open: (session) => {
        const writer = this.openLive(session)
        writer.onFail = warn
        mine.add(writer)
        return writer
      },
      close: async (writer) => {
        disown(writer)
        this.close(writer)
      },
      drop: async (writer) => {
        disown(writer)
        if (this.writers.get(writer.id) === writer) this.writers.delete(writer.id)
      },
      closeAll: async () => {
        for (const writer of [...mine]) {
          disown(writer)
          try {
            this.close(writer)
          } catch (error) {
            if (error !== writer.failed) warn(error)
          }
        }
      },
      refusal: (session, cause) =>
        cause instanceof SessionError ? cause : new SessionError('INVALID_ARGUMENT', `session "${session.id}" cannot be stored`, { cause }),
      warn,
    }
  }

  /** Moves a writer's pending lines into the stored log. Throws (and fails the writer) if the log changed under it. */
  [store](writer: MemoryWriter): void {
    if (writer.failed) throw writer.failed
    if (writer.pending.length === 0) return
    const id = writer.id
    let record = this.durable.sessions.get(id)
    if (writer.persisted === 0 && record === undefined) this.durable.sessions.set(id, (record = { lines: [], updatedAt: 0 }))
    if (record === undefined || record.lines.length !== writer.persisted) {
      throw writer.fail(
        new SessionError(
          'INVALID_APPEND',
          `the stored log of session "${id}" changed (another writer, a delete) since this backend loaded or wrote it; nothing after its last flush is stored. Load it again.`,
        ),
      )
    }
    for (const line of writer.pending) record.lines.push(line)
    writer.persisted += writer.pending.length
    writer.pending = []
    record.updatedAt = Date.now()
  }

  /** Where a first append to `id` with no writer must start: 0 for a new id, the end of a log loaded here. */
  private startOf(id: string, first: number): number {
    if (!this.durable.sessions.has(id)) {
      if (first !== 0) {
        throw new SessionError('INVALID_APPEND', `session "${id}" is not stored, so its first append must start with session/meta at seq 0 (got seq ${first}); nothing was queued`)
      }
      return 0
    }
    const handover = this.handovers.get(id)
    if (handover === undefined || first === 0) throw exists(id)
    if (first !== handover.count) {
      throw new SessionError(
        'INVALID_APPEND',
        `session "${id}" holds ${handover.count} events as this backend last loaded or wrote it, so the next append must start at seq ${handover.count}, not ${first}; nothing was queued`,
      )
    }
    return first
  }

  private openWriter(id: string, start: number): MemoryWriter {
    const writer = new MemoryWriter(id, start, this)
    this.handovers.delete(id)
    this.writers.set(id, writer)
    return writer
  }

  private openLive(session: Session): MemoryWriter {
    const id = session.id
    checkId(id)
    if (this.writers.has(id)) throw locked(id)
    let start = 0
    if (this.durable.sessions.has(id)) {
      const handover = this.handovers.get(id)
      const last = handover && session.events[handover.count - 1]
      if (!last || last.type !== handover.lastType || last.time !== handover.lastTime) throw exists(id)
      start = handover.count
    }
    const writer = this.openWriter(id, start)
    writer.owner = session
    return writer
  }

  /** Stores what a writer holds and lets go of it, remembering where the log ends. */
  private close(writer: MemoryWriter): void {
    if (this.writers.get(writer.id) === writer) this.writers.delete(writer.id)
    this[store](writer)
    if (writer.lastType !== undefined) this.handovers.set(writer.id, { count: writer.nextSeq, lastType: writer.lastType, lastTime: writer.lastTime })
  }

  private record(id: string) {
    const record = this.durable.sessions.get(id)
    if (!record) throw notFound(id)
    return record
  }
}

/** Checks that `events` continue the log at `start` (seq 0 being `session/meta`) and serializes them; throws `INVALID_APPEND`. */
function serializeAppend(id: string, events: readonly AnySessionEvent[], start: number): string[] {
  const lines: string[] = []
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    const expected = start + i
    if (event.seq !== expected) {
      throw new SessionError('INVALID_APPEND', `cannot append to session "${id}": expected seq ${expected}, got ${event.seq} (appends continue the log without gaps); nothing was queued`)
    }
    if (expected === 0 && event.type !== 'session/meta') {
      throw new SessionError('INVALID_APPEND', `cannot append to session "${id}": seq 0 must be its session/meta (got ${event.type}); nothing was queued`)
    }
    try {
      lines.push(serializeEvent(event))
    } catch (cause) {
      throw new SessionError('INVALID_APPEND', `cannot append to session "${id}": event seq ${expected} (${event.type}) is not JSON; nothing was queued`, { cause })
    }
  }
  return lines
}

function metaOf(line: string): SessionEventMap['session/meta'] {
  return (JSON.parse(line) as { data: SessionEventMap['session/meta'] }).data
}

function infoOf(id: string, meta: SessionEventMap['session/meta'], updatedAt: number): PersistedSessionInfo {
  const info: PersistedSessionInfo = { id: SessionId(id), createdAt: meta.createdAt, updatedAt }
  if (meta.cwd !== undefined) info.cwd = meta.cwd
  if (meta.parentSession !== undefined) info.parentSession = meta.parentSession
  return info
}

function noop(): void {}

function checkId(id: unknown): void {
  if (typeof id !== 'string' || id.length === 0) throw new SessionError('INVALID_ARGUMENT', 'a session id must be a non-empty string')
}

const notFound = (id: string) => new SessionError('SESSION_NOT_FOUND', `no session "${id}" is stored (nothing was flushed under this id)`)

const locked = (id: string) =>
  new SessionError(
    'SESSION_LOCKED',
    `session "${id}" is already being written by this backend (a live session with this id, or direct appends not released yet); dispose it, or load or release it, before writing it again`,
  )

const exists = (id: string) =>
  new SessionError(
    'SESSION_EXISTS',
    `a stored session "${id}" already exists; writing a new log under its id would replace it. Resume it (load it first), delete it, or pick another id`,
  )
