import { mkdirSync } from 'node:fs'
import { open, readdir, stat, unlink } from 'node:fs/promises'
import { repairSession, type LoadedLog } from '@deepseek-ai/dsh-session'
import type {
  AnySessionEvent,
  LoadedSession,
  PersistedSessionInfo,
  Session,
  SessionEventMap,
  SessionId,
  SessionLoadWarning,
  SessionPersistence,
  SessionRepair,
} from '@deepseek-ai/dsh-session'
import { JsonlPersistenceError, errnoCode, fsError } from './errors'
import type { EventTypeCatalog } from './event-types'
import { mayHoldEventsSync, readFirstLine } from './first-line'
import { handovers, type Handover } from './handover'
import { FORMAT_VERSION, serializeEvent } from './line-format'
import { acquireLock } from './lock'
import { directoryExists, notADirectory, regularFileAt } from './path-state'
import { readSessionFile, notFound } from './read-session-file'
import { SESSION_FILE_EXTENSION, assertSafeSessionId, isSafeSessionId, sessionPaths, type SessionPaths } from './session-paths'
import { SessionWriter, syncDirectory } from './session-writer'
import { cutTornTail, cutTornTailSync } from './torn-tail'

/** Lines per write call: large enough to amortize the syscall, small enough to keep the string short. */
const BATCH_LINES = 4096
/** How many files `list()` inspects at once. */
const LIST_CONCURRENCY = 16

type Meta = SessionEventMap['session/meta']

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
 * The JSONL backend itself, without Cordis: `JsonlSessionPersistence` is its
 * service facade (calls through a Cordis service proxy cost microseconds per
 * property access, so the work happens on this plain object).
 *
 * It keeps one `SessionWriter` per session file it writes, either for a live
 * session (`attach` from `session/created`, or `adopt` for a session it first
 * meets through its events) or for direct `append()` calls, and serializes
 * `load`/`delete`/`release` per id.
 */
export class SessionFiles implements SessionPersistence {
  readonly directory: string
  private readonly flushIntervalMs: number
  private readonly types: EventTypeCatalog
  private readonly writers = new Map<string, SessionWriter>()
  /** Live sessions this backend could not take on, with the reason; their flushes reject with it. */
  private readonly refused = new WeakMap<Session, JsonlPersistenceError>()
  /** Closes started by `session/disposed`, awaited on plugin disposal. */
  private readonly background = new Set<Promise<void>>()
  /** Writers published in the current tick, with their session's length at `session/created`. */
  private readonly announcing = new Map<SessionWriter, number>()
  /** Per-id queue of `load`/`delete`/`release`, so they never interleave on one file. */
  private readonly exclusive = new Map<string, Promise<unknown>>()
  /** `whenDetached()` callers, told when no writer serves a live session any more. */
  private detachedWaiters: Array<() => void> = []

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
    await this.exclusive.get(id)
    let writer = this.writers.get(id)
    if (writer?.owner) throw liveError(id)
    if (writer?.closed) {
      // Closing after its session was disposed: continue from its handover once it is done.
      await writer.whenClosed().catch(() => {})
      writer = this.writers.get(id)
    }
    const lines = this.serializeAll(id, events, writer?.nextSeq)
    if (!writer) {
      writer = this.open(id, events[0]!.seq)
    }
    if (writer.failed) throw writer.failed
    for (let i = 0; i < events.length; i++) this.enqueue(writer, events[i]!, lines[i]!)
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
  load(id: SessionId): Promise<LoadedSession> {
    assertSafeSessionId(id)
    return this.exclusively(id, () => this.loadNow(id))
  }

  /** See `JsonlSessionPersistence.list`. */
  async list(): Promise<PersistedSessionInfo[]> {
    const infos = new Map<string, PersistedSessionInfo>()
    let names: string[] = []
    try {
      names = await readdir(this.directory)
    } catch (error) {
      if (errnoCode(error) === 'ENOTDIR') throw notADirectory(this.directory, error)
      if (errnoCode(error) !== 'ENOENT') throw fsError(error, { operation: 'read', file: this.directory, doing: 'Listing the session directory' })
    }
    const ids = names
      .filter((name) => name.endsWith(SESSION_FILE_EXTENSION))
      .map((name) => name.slice(0, -SESSION_FILE_EXTENSION.length))
      .filter(isSafeSessionId)
    let next = 0
    const worker = async () => {
      while (next < ids.length) {
        const id = ids[next++]!
        const info = await this.inspect(id)
        if (info) infos.set(id, info)
      }
    }
    await Promise.all(Array.from({ length: Math.min(LIST_CONCURRENCY, ids.length) }, worker))
    for (const writer of this.writers.values()) {
      if (!infos.has(writer.id) && writer.meta) infos.set(writer.id, infoOf(writer.id, writer.meta, Date.now()))
    }
    return [...infos.values()].sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
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
    return this.exclusively(id, () => this.deleteNow(id))
  }

  // ---- Beyond the contract --------------------------------------------------------------

  /** See `JsonlSessionPersistence.release`. */
  release(id: SessionId): Promise<void> {
    assertSafeSessionId(id)
    return this.exclusively(id, async () => {
      const writer = this.writers.get(id)
      if (writer?.owner) throw new JsonlPersistenceError('SESSION_LIVE', `Session "${id}" is live; it is released when it is disposed.`)
      if (writer) await this.close(writer)
    })
  }

  /** The file that holds (or would hold) session `id`. */
  fileOf(id: SessionId): string {
    assertSafeSessionId(id)
    return this.paths(id).file
  }

  // ---- Wiring to live sessions ----------------------------------------------------------

  /**
   * `session/created`: takes the lock and queues what is not on disk yet. A
   * throw here vetoes the publication of the session.
   */
  attach(session: Session): void {
    const existing = this.writers.get(session.id)
    if (existing?.owner === session) return
    const writer = this.open(session.id, 0, session)
    writer.owner = session
    const events = session.events
    for (let seq = writer.nextSeq; seq < events.length; seq++) this.enqueueLive(writer, events[seq]!)
    // A vetoed or rolled-back publication disposes the session synchronously, before anything
    // is appended to it; until then nothing of it has reached the disk (writes start on a timer).
    this.announcing.set(writer, events.length)
    queueMicrotask(() => this.announcing.delete(writer))
  }

  /** `session/event`: the hot path. Catches up on anything missed, normally just `event`. */
  record(session: Session, event: AnySessionEvent): void {
    let writer = this.writers.get(session.id)
    if (writer?.owner !== session) {
      writer = this.adopt(session)
      if (!writer) return
    }
    if (event.seq < writer.nextSeq) return
    if (event.seq === writer.nextSeq) return this.enqueueLive(writer, event)
    const events = session.events
    for (let seq = writer.nextSeq; seq <= event.seq; seq++) this.enqueueLive(writer, events[seq]!)
  }

  /** `session/flush`: the durability checkpoint of one live session. */
  async flushLive(session: Session): Promise<void> {
    let writer = this.writers.get(session.id)
    if (writer?.owner !== session) writer = this.adopt(session)
    if (!writer) {
      const reason = this.refused.get(session)
      if (reason) throw reason
      return
    }
    // Events appended before this plugin saw them (none, normally).
    this.catchUp(writer, session)
    await writer.flush()
  }

  /**
   * `session/disposed`: drain, fsync and release in the background; plugin
   * disposal awaits it. A session disposed in the tick it was published,
   * with nothing appended since, is taken for a vetoed or rolled-back
   * publication (that is how the store and the agent loop roll back): it was
   * never live, so its queued events are dropped and its id stays free on
   * disk too.
   */
  detach(session: Session): void {
    const writer = this.writers.get(session.id)
    if (writer?.owner !== session) return
    const rolledBack = this.announcing.get(writer) === session.events.length
    // Events the observer did not see (it is removed first when the plugin is disposed).
    if (!rolledBack) this.catchUp(writer, session)
    writer.owner = undefined
    const closing = (rolledBack ? this.drop(writer, 'its publication was vetoed') : this.close(writer)).catch((error) => this.warnOnce(writer, error))
    this.background.add(closing)
    void closing.finally(() => this.background.delete(closing))
    this.checkDetached()
  }

  /**
   * Resolves once no writer serves a live session: every session this backend
   * took on has been disposed (its close may still be running; `closeAll`
   * awaits those). Sessions taken on meanwhile are waited for too.
   */
  whenDetached(): Promise<void> {
    return new Promise((resolve) => {
      this.detachedWaiters.push(resolve)
      this.checkDetached()
    })
  }

  private checkDetached(): void {
    if (this.detachedWaiters.length === 0) return
    for (const writer of this.writers.values()) if (writer.owner !== undefined) return
    for (const resolve of this.detachedWaiters.splice(0)) resolve()
  }

  private catchUp(writer: SessionWriter, session: Session): void {
    const events = session.events
    for (let seq = writer.nextSeq; seq < events.length; seq++) this.enqueueLive(writer, events[seq]!)
  }

  /**
   * A live session this backend did not see created (the plugin was mounted,
   * or re-mounted, after it): take it on now. A session that cannot be taken
   * on is remembered, logged once, and its flushes reject with the reason.
   */
  private adopt(session: Session): SessionWriter | undefined {
    if (this.refused.has(session)) return undefined
    const writer = this.writers.get(session.id)
    if (writer?.owner && writer.owner !== session) return undefined
    try {
      this.attach(session)
      return this.writers.get(session.id)
    } catch (error) {
      const reason =
        error instanceof JsonlPersistenceError
          ? error
          : new JsonlPersistenceError('WRITE_FAILED', `Could not open session "${session.id}" for writing.`, { cause: error })
      this.refused.set(session, reason)
      this.options.warn(reason)
      return undefined
    }
  }

  private enqueueLive(writer: SessionWriter, event: AnySessionEvent): void {
    if (writer.failed) return
    try {
      writer.enqueueEvent(event)
    } catch (error) {
      writer.fail(
        new JsonlPersistenceError(
          'WRITE_FAILED',
          `Event ${event.seq} (${event.type}) of session "${writer.id}" cannot be serialized as JSON; nothing after seq ${event.seq - 1} will be written.`,
          { file: writer.file, cause: error },
        ),
      )
      return
    }
    this.noteQueued(writer, event)
  }

  /** Queues a direct append's event, serialized (and checked) beforehand. */
  private enqueue(writer: SessionWriter, event: AnySessionEvent, line: string): void {
    writer.enqueue(line)
    this.noteQueued(writer, event)
  }

  private noteQueued(writer: SessionWriter, event: AnySessionEvent): void {
    if (event.seq === 0) writer.meta = event.data as Meta
    writer.lastType = event.type
    writer.lastTime = event.time
  }

  // ---- Opening, loading, deleting -------------------------------------------------------

  /**
   * Opens session `id` for writing: takes its lock (synchronously) and decides
   * where the writer continues. A missing file (or one that provably holds no
   * event) starts fresh; an existing file is continued only from a handover
   * this process recorded, and only if the file is unchanged since.
   *
   * A live `session` must extend the handover's log; a direct append must
   * start (`firstSeq`) right after it.
   */
  private open(id: string, firstSeq: number, session?: Session): SessionWriter {
    assertSafeSessionId(id)
    const existing = this.writers.get(id)
    if (existing) throw liveError(id)
    const paths = this.paths(id)
    this.makeDirectory()
    const lock = acquireLock(paths, id)
    try {
      let persisted = 0
      let size = 0
      let creates = true
      const current = regularFileAt(paths.file, `the file of session "${id}"`)
      if (current && mayHoldEvents(paths.file)) {
        const handover = handovers.get(paths.file)
        if (!handover) throw existsError(id, paths.file)
        if (handover.size !== current.size) {
          throw new JsonlPersistenceError(
            'SESSION_CHANGED',
            `Session file ${paths.file} changed on disk since this process last read or wrote it; load session "${id}" again before writing it.`,
            { file: paths.file },
          )
        }
        if (!continues(handover, session, firstSeq)) throw existsError(id, paths.file)
        persisted = handover.count
        size = handover.size
        creates = false
      } else if (current) {
        // The writer died before its first line: nothing was ever durable. Start over, keeping
        // whatever it left in a sidecar.
        if (current.size > 0) {
          const sidecar = cutTornTailSync(paths.file, 0)
          this.options.warn(
            `Session file ${paths.file} held no complete line (its writer stopped before its first flush); its ${current.size} bytes were moved to ${sidecar} and the file starts over.`,
          )
        }
      } else if (firstSeq !== 0 && session === undefined) {
        throw new JsonlPersistenceError(
          'INVALID_APPEND',
          `Session "${id}" has no file yet, so its first append must start with session/meta at seq 0 (got seq ${firstSeq}).`,
          { file: paths.file },
        )
      }
      handovers.delete(paths.file)
      const writer = new SessionWriter({
        id,
        file: paths.file,
        lock,
        persisted,
        size,
        creates,
        flushIntervalMs: this.flushIntervalMs,
        batchLines: BATCH_LINES,
        onFail: (error) => this.options.warn(error),
      })
      this.writers.set(id, writer)
      return writer
    } catch (error) {
      const released = lock.releaseQuietly()
      if (released) this.options.warn(released)
      throw error
    }
  }

  /** Creates the session directory (mode 0700) if it is missing. */
  private makeDirectory(): void {
    try {
      mkdirSync(this.directory, { recursive: true, mode: 0o700 })
    } catch (error) {
      const errno = errnoCode(error)
      if (errno === 'EEXIST' || errno === 'ENOTDIR') throw notADirectory(this.directory, error)
      throw fsError(error, { operation: 'write', file: this.directory, doing: 'Creating the session directory' })
    }
  }

  private async loadNow(id: string): Promise<LoadedSession> {
    const paths = this.paths(id)
    const writer = this.writers.get(id)
    if (writer?.owner) throw liveError(id)
    if (writer) await this.close(writer).catch(() => {})
    // Lock first: a session another writer holds but has not written yet is locked, not missing.
    const lock = this.lockExisting(id, paths)
    try {
      if (!regularFileAt(paths.file, `the file of session "${id}"`)) throw notFound(id, paths.file)
      const contents = await readSessionFile(paths.file, id, this.types)
      const log = contents.log
      const warnings: SessionLoadWarning[] = []
      if (contents.torn) {
        const { line, bytes } = contents.torn
        const sidecar = await cutTornTail(paths.file, contents.validBytes)
        warnings.push({
          code: 'TORN_TAIL',
          message: `Dropped a torn last line (line ${line}, ${bytes} bytes without a final newline) of ${paths.file}: its writer stopped mid-write, after its last flush. The bytes were copied to ${sidecar}; the file now ends at the last complete event.`,
          file: paths.file,
          line,
          sidecar,
        })
      }
      const { repairs, bytes } = await this.repair(paths, log)
      const last = log.events[log.length - 1]!
      handovers.set(paths.file, { count: log.length, size: contents.validBytes + bytes, lastType: last.type, lastTime: last.time })
      return { id: id as SessionId, events: log.events, repairs, warnings }
    } finally {
      // A lock file that cannot be removed is judged stale by the next writer; the load stands.
      const released = lock.releaseQuietly()
      if (released) this.options.warn(released)
    }
  }

  /**
   * Appends crash repairs (R-PER-3, dsh-session's `repairSession`) to the file
   * and to `log`, fsynced; returns them and the bytes written.
   */
  private async repair(paths: SessionPaths, log: LoadedLog): Promise<{ repairs: SessionRepair[]; bytes: number }> {
    const plan = repairSession(log.events)
    if (plan.events.length === 0) return { repairs: [], bytes: 0 }
    const bytes = Buffer.from(plan.events.map(serializeEvent).join('\n') + '\n', 'utf8')
    try {
      const handle = await open(paths.file, 'a', 0o600)
      try {
        let offset = 0
        while (offset < bytes.length) offset += (await handle.write(bytes, offset, bytes.length - offset)).bytesWritten
        await handle.datasync()
      } finally {
        await handle.close()
      }
    } catch (error) {
      throw fsError(error, {
        operation: 'write',
        file: paths.file,
        doing: 'Appending the crash repairs',
        consequence: 'The session was not loaded; the next load repairs it again.',
      })
    }
    for (const event of plan.events) log.push(event)
    return { repairs: [...plan.repairs], bytes: bytes.length }
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
      await this.drop(writer, 'it was deleted').catch(() => {})
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

  /** Discards a writer's queue and releases its lock, recording nothing. */
  private async drop(writer: SessionWriter, reason: string): Promise<void> {
    try {
      await writer.discard(reason)
    } finally {
      if (this.writers.get(writer.id) === writer) this.writers.delete(writer.id)
    }
  }

  /** Closes a writer and records what it left on disk, so a later writer can continue it. */
  private async close(writer: SessionWriter): Promise<void> {
    try {
      await writer.close()
      if (writer.nextSeq > 0 && writer.lastType !== undefined) {
        handovers.set(writer.file, { count: writer.nextSeq, size: writer.size, lastType: writer.lastType, lastTime: writer.lastTime! })
      }
    } finally {
      if (this.writers.get(writer.id) === writer) this.writers.delete(writer.id)
    }
  }

  async closeAll(): Promise<void> {
    const closes = [...this.writers.values()].map((writer) => this.close(writer).catch((error) => this.warnOnce(writer, error)))
    await Promise.all([...closes, ...this.background])
  }

  /** Logs a failed close, unless it is the writer's own failure, which was logged when it happened. */
  private warnOnce(writer: SessionWriter, error: unknown): void {
    if (error !== writer.failed) this.options.warn(error)
  }

  private async inspect(id: string): Promise<PersistedSessionInfo | undefined> {
    const file = this.paths(id).file
    try {
      const [line, stats] = await Promise.all([readFirstLine(file), stat(file)])
      if (line === undefined) return undefined
      const event = JSON.parse(line) as { type?: unknown; data?: Partial<Meta> }
      if (event.type !== 'session/meta' || typeof event.data?.createdAt !== 'number') return undefined
      return infoOf(id, event.data as Meta, Math.floor(stats.mtimeMs))
    } catch (error) {
      // Gone meanwhile, or not a file (a directory named like a session): not a session to list.
      if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'EISDIR') return undefined
      if (error instanceof SyntaxError) return undefined
      throw fsError(error, { operation: 'read', file, doing: `Reading the first line of session "${id}"` })
    }
  }

  /** Checks and serializes a direct append before anything is queued. */
  private serializeAll(id: string, events: readonly AnySessionEvent[], nextSeq: number | undefined): string[] {
    const lines: string[] = []
    let expected = nextSeq ?? events[0]?.seq
    for (const event of events) {
      const problem = eventProblem(event, expected!)
      if (problem) {
        throw new JsonlPersistenceError('INVALID_APPEND', `Cannot append to session "${id}": ${problem}. Nothing was queued.`)
      }
      try {
        lines.push(serializeEvent(event))
      } catch (error) {
        throw new JsonlPersistenceError(
          'INVALID_APPEND',
          `Cannot append to session "${id}": event ${event.seq} (${event.type}) is not serializable JSON. Nothing was queued.`,
          { cause: error },
        )
      }
      expected!++
    }
    if (nextSeq === undefined && events[0]!.seq === 0 && events[0]!.type !== 'session/meta') {
      throw new JsonlPersistenceError('INVALID_APPEND', `Cannot append to session "${id}": seq 0 must be its session/meta. Nothing was queued.`)
    }
    return lines
  }

  private exclusively<T>(id: string, task: () => Promise<T>): Promise<T> {
    const previous = this.exclusive.get(id) ?? Promise.resolve()
    const run = previous.then(task, task)
    const settled = run.then(
      () => {},
      () => {},
    )
    this.exclusive.set(id, settled)
    void settled.then(() => {
      if (this.exclusive.get(id) === settled) this.exclusive.delete(id)
    })
    return run
  }

  private paths(id: string): SessionPaths {
    return sessionPaths(this.directory, id)
  }
}

function continues(handover: Handover, session: Session | undefined, firstSeq: number): boolean {
  if (session) {
    const last = session.events[handover.count - 1]
    return last !== undefined && last.type === handover.lastType && last.time === handover.lastTime
  }
  return firstSeq === handover.count
}

function eventProblem(event: AnySessionEvent, seq: number): string | undefined {
  if (typeof event !== 'object' || event === null) return 'an event is not an object'
  if (event.seq !== seq) return `expected seq ${seq}, got ${String(event.seq)} (appends must continue the log without gaps)`
  if (typeof event.type !== 'string' || event.type.length === 0) return `event ${seq} has no type`
  if (typeof event.time !== 'number' || !Number.isFinite(event.time)) return `event ${seq} has no finite time`
  if (typeof event.data !== 'object' || event.data === null || Array.isArray(event.data)) return `event ${seq} has no object data`
  if (event.type === 'session/meta' && (event.data as Meta).version > FORMAT_VERSION) {
    return `event ${seq} is a session/meta of format version ${(event.data as Meta).version}, newer than ${FORMAT_VERSION}`
  }
  return undefined
}

function infoOf(id: string, meta: Meta, updatedAt: number): PersistedSessionInfo {
  const info: PersistedSessionInfo = { id: id as SessionId, createdAt: meta.createdAt, updatedAt }
  if (meta.cwd !== undefined) info.cwd = meta.cwd
  if (meta.parentSession !== undefined) info.parentSession = meta.parentSession
  return info
}

function liveError(id: string): JsonlPersistenceError {
  return new JsonlPersistenceError(
    'SESSION_LOCKED',
    `Session "${id}" is already being written in this process (a live session with this id, or a writer still closing). Dispose it, or wait for its disposal, before opening it again.`,
  )
}

function existsError(id: string, file: string): JsonlPersistenceError {
  return new JsonlPersistenceError(
    'SESSION_EXISTS',
    `A session file for "${id}" already exists (${file}); writing a new log into it would corrupt it. Resume it (load it first), delete it, or pick another id.`,
    { file },
  )
}

/** `mayHoldEventsSync` with its failures typed. */
function mayHoldEvents(file: string): boolean {
  try {
    return mayHoldEventsSync(file)
  } catch (error) {
    throw fsError(error, { operation: 'read', file, doing: 'Reading the first line of the session file' })
  }
}
