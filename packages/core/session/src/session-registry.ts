import { randomUUID } from 'node:crypto'
import { announce, ContainedEmitter, heard, rawEvents, type RawEvents } from '@deepseek-ai/dsh-scope'
import type { Context } from './cordis'
import { SessionError } from './errors'
import { EventTypes, type EventTypeInfo, type EventTypeOptions } from './event-types'
import { loadedEntries } from './log/loaded-log'
import { JsonGuard } from './log/lossless-json'
import { replay, replayLoaded } from './log-replay'
import type { PrepareOptions } from './prepare-options'
import type { Session } from './session'
import type { SessionEntry } from './session-entry'
import { SessionLog, type SessionHome } from './session-log'
import {
  SESSION_FORMAT_VERSION,
  SessionId,
  type AnySessionEvent,
  type SessionEventMap,
  type SessionMetaInput,
} from './types'

/**
 * The state and logic behind `ctx.sessions`, as a plain object. The Cordis
 * service (`SessionStore`) is a facade whose methods delegate here, so that
 * nothing on these paths goes through Cordis' tracing proxies (see
 * `untraced`). The contracts are documented on `SessionStore`.
 */
export class SessionRegistry {
  readonly home: SessionHome
  private readonly live = new Map<string, SessionLog>()
  private readonly events: RawEvents
  /**
   * The own `session/meta` entry of each fork this store built, to its fork:
   * how `prepare` recognises a seed that is a private fork's events (weak:
   * a fork nobody holds is forgotten).
   */
  private readonly forks = new WeakMap<object, SessionLog>()
  /** The persistence claims of each session ever claimed (`claim`): how many are held, and the last holder. */
  private readonly claims = new WeakMap<SessionLog, { held: number; holder: string }>()

  constructor(ctx: Context) {
    this.events = rawEvents(ctx)
    this.home = {
      ctx,
      emitter: new ContainedEmitter(this.events),
      json: new JsonGuard(),
      types: new EventTypes(),
      logger: ctx.logger('dsh-session'),
    }
  }

  create(caller: Context, id: SessionId | string, meta?: SessionMetaInput): Session {
    const session = this.prepare(id, meta === undefined ? {} : { meta })
    const release = caller.fiber.effect(() => this.enter(session), `sessions.create(${JSON.stringify(id)})`)
    // A `session/created` listener may have disposed the caller's fiber while
    // the session was being announced; the fiber had already collected its
    // effects by then, so release the session now that the dispatch has
    // unwound (the announcement stays paired with its disposal).
    if (caller.fiber.uid === null) release()
    return session
  }

  prepare(id: SessionId | string, options: PrepareOptions = {}): Session {
    if (typeof id !== 'string' || id.length === 0) {
      throw new SessionError('INVALID_ARGUMENT', 'a session id must be a non-empty string')
    }
    const { events } = options
    if (options.seed === undefined || events !== undefined) return this.build(id, options)
    return this.build(id, this.unwrapFork(id, options.meta, options.seed))
  }

  /** `prepare` without recognising a fork's events in `seed` (what `fork` itself builds with). */
  private build(id: string, options: PrepareOptions): SessionLog {
    const { meta, seed, events } = options
    if (events !== undefined && (meta !== undefined || seed !== undefined)) {
      throw new SessionError('INVALID_ARGUMENT', `prepare("${id}"): a loaded log (events) cannot be combined with meta or seed`)
    }
    const log = new SessionLog(SessionId(id), this.home)
    if (events !== undefined) {
      const loaded = loadedEntries(events)
      if (loaded) replayLoaded(log, loaded.slots, loaded.pack, `cannot load session "${id}"`)
      else replay(log, events, 0, `cannot load session "${id}"`)
      log.loadedLength = log.length
      return log
    }
    const data = freshMeta(id, meta, seed?.length)
    log.admitMeta(data, data.createdAt)
    if (seed !== undefined) {
      replay(log, seed, 1, `cannot seed session "${id}"`)
      const open = log.position.openTurn
      if (open) {
        throw new SessionError('OPEN_TURN', `cannot seed session "${id}": the seed ends inside turn ${open.turn}; a seed must be a closed-turn prefix`)
      }
    }
    return log
  }

  enter(session: Session): () => void {
    const entry = this.enterUnannounced(session)
    try {
      entry.announce()
    } catch (error) {
      entry.detach()
      throw error
    }
    return entry.detach
  }

  enterUnannounced(session: Session): SessionEntry {
    const log = this.own(session, 'enter')
    if (log.stage !== 'private') {
      throw new SessionError('ALREADY_ENTERED', `session "${log.id}" was already entered once; prepare a new session to publish it again`)
    }
    if (this.live.has(log.id)) {
      throw new SessionError('DUPLICATE_ID', `a session with id "${log.id}" is already live; detach it first or choose another id`)
    }
    this.live.set(log.id, log)
    log.stage = 'live'
    let state: 'entered' | 'announcing' | 'announced' | 'detached' = 'entered'
    let detachAsked = false
    const detach = (): void => {
      // Asked during the created dispatch (by one of its listeners): it runs once the dispatch has unwound.
      if (state === 'announcing') {
        detachAsked = true
        return
      }
      if (state === 'detached') return
      const announced = state === 'announced'
      state = 'detached'
      this.detach(log, announced)
    }
    const announce = (): void => {
      if (state === 'detached') throw new SessionError('DETACHED', `session "${log.id}" was detached before it was announced`)
      if (state !== 'entered') throw new SessionError('ALREADY_ENTERED', `session "${log.id}" was already announced: an entry is announced once`)
      state = 'announcing'
      log.announcing = true
      try {
        this.announce(log)
      } finally {
        // Announced even when a listener vetoed: the listeners before it saw it created.
        state = 'announced'
        log.announcing = false
        if (detachAsked) detach()
      }
    }
    return { announce, detach }
  }

  get(id: string): Session | undefined {
    return this.live.get(id)
  }

  list(): Session[] {
    return [...this.live.values()]
  }

  /**
   * With no `session/flush` listener (no persistence mounted) nothing is
   * dispatched and no promise is made: the answer is a shared resolved one,
   * or the rejection of a session whose backend was unplugged. The loop
   * flushes several times per turn.
   */
  flush(session: Session): Promise<void> {
    let log: SessionLog
    try {
      log = this.own(session, 'flush')
    } catch (error) {
      return Promise.reject(error)
    }
    if (log.stage !== 'live') return RESOLVED
    if (heard(this.events, 'session/flush')) return this.dispatchFlush(log)
    const detached = this.detachedProblem(log)
    return detached === undefined ? RESOLVED : Promise.reject(detached)
  }

  /**
   * Whether `flush(session)` has anything to do: it would dispatch
   * `session/flush` (a persistence listener is mounted), or reject (a
   * session of another store, or one whose backend was unplugged while it
   * lives). False means `flush` would answer a resolved promise and do
   * nothing, so a caller on a hot path may skip it.
   */
  flushes(session: Session): boolean {
    if (!(session instanceof SessionLog) || session.home !== this.home) return true
    if (session.stage !== 'live') return false
    return heard(this.events, 'session/flush') || this.detachedProblem(session) !== undefined
  }

  private async dispatchFlush(log: SessionLog): Promise<void> {
    try {
      await this.events.parallel(log.filter, 'session/flush', log)
    } catch (error) {
      throw flushFailed(log.id, error)
    }
    // Checked after the dispatch: a backend mounted again takes the session on (and claims it) in its listener.
    const detached = this.detachedProblem(log)
    if (detached !== undefined) throw detached
  }

  /** `PERSISTENCE_DETACHED` when the session was claimed and no claim holds it while it is live. */
  private detachedProblem(log: SessionLog): SessionError | undefined {
    const claim = this.claims.get(log)
    if (claim === undefined || claim.held !== 0 || log.stage !== 'live') return undefined
    return new SessionError(
      'PERSISTENCE_DETACHED',
      `session "${log.id}" is no longer persisted: ${claim.holder} stopped writing it while it is live (its plugin was unloaded), so nothing appended since is stored; mount a persistence backend again (it takes the session on at its next event or flush) or dispose the session`,
    )
  }

  claim(session: Session, holder: string): () => void {
    const log = this.own(session, 'claim')
    if (typeof holder !== 'string' || holder.length === 0) {
      throw new SessionError('INVALID_ARGUMENT', 'sessions.claim() takes the name of the backend that persists the session')
    }
    let known = this.claims.get(log)
    if (known === undefined) this.claims.set(log, (known = { held: 0, holder }))
    const claim = known
    claim.held++
    claim.holder = holder
    let released = false
    return () => {
      if (released) return
      released = true
      claim.held--
      claim.holder = holder
    }
  }

  fork(source: Session, boundarySeq: number | undefined, childId: SessionId | string | undefined): Session {
    const events = source.events
    const boundary = boundarySeq ?? events.length
    if (!Number.isInteger(boundary) || boundary < 0 || boundary > events.length) {
      throw new SessionError(
        'INVALID_BOUNDARY',
        `cannot fork session "${source.id}" at ${boundary}: the boundary is the number of events to copy, an integer from 0 to ${events.length}`,
      )
    }
    const open = openTurnAt(events, boundary)
    if (open) {
      const later = open.end === undefined ? 'or wait until the turn has ended' : `or at ${open.end + 1} or later (after its turn/end)`
      throw new SessionError(
        'OPEN_TURN',
        `cannot fork session "${source.id}" at ${boundary}: turn ${open.turn} is open there (it starts at seq ${open.start}); fork at ${open.start} or earlier, ${later}`,
      )
    }
    const meta: SessionMetaInput = { parentSession: source.id }
    if (source.meta.cwd !== undefined) meta.cwd = source.meta.cwd
    const id = childId ?? `${source.id}-fork-${randomUUID()}`
    if (typeof id !== 'string' || id.length === 0) {
      throw new SessionError('INVALID_ARGUMENT', 'a session id must be a non-empty string')
    }
    const child = this.build(id, { meta, seed: events.slice(0, boundary) })
    this.forks.set(child.slots.get(0) as object, child)
    return child
  }

  /**
   * A seed whose first event is the own `session/meta` of a fork this store
   * built and nobody entered (`seed: fork(source).events`, the obvious call)
   * is that fork: its meta gives the parent link and the cwd, and the events
   * after it are the seed. Anything else is a plain prefix, kept as given.
   */
  private unwrapFork(id: string, meta: SessionMetaInput | undefined, seed: readonly AnySessionEvent[]): PrepareOptions {
    const first = Array.isArray(seed) && seed.length > 0 ? seed[0] : undefined
    const fork = first !== null && typeof first === 'object' ? this.forks.get(first) : undefined
    if (!fork || fork.stage !== 'private') return meta === undefined ? { seed } : { meta, seed }
    const own = fork.meta
    if (meta !== undefined && (meta === null || typeof meta !== 'object')) {
      throw new SessionError('INVALID_ARGUMENT', `prepare("${id}"): meta must be an object { cwd?, parentSession? }`)
    }
    if (meta?.parentSession !== undefined && meta.parentSession !== own.parentSession) {
      throw new SessionError(
        'INVALID_ARGUMENT',
        `cannot seed session "${id}" with the events of fork "${fork.id}": they fork "${own.parentSession}", but meta.parentSession says "${meta.parentSession}"; leave meta.parentSession out (the fork's parent is taken) or fork the session you mean`,
      )
    }
    const merged: SessionMetaInput = {}
    const cwd = meta?.cwd ?? own.cwd
    if (cwd !== undefined) merged.cwd = cwd
    if (own.parentSession !== undefined) merged.parentSession = own.parentSession
    return { meta: merged, seed: seed.slice(1) }
  }

  registerType(caller: Context, type: string, options: EventTypeOptions<any>): () => void {
    const dispose = caller.fiber.effect(() => this.home.types.add(type, options), `sessions.registerType(${JSON.stringify(type)})`)
    return () => void dispose()
  }

  typeInfo(type: string): EventTypeInfo | undefined {
    return this.home.types.info(type)
  }

  private own(session: Session, operation: string): SessionLog {
    if (!(session instanceof SessionLog) || session.home !== this.home) {
      throw new SessionError('INVALID_ARGUMENT', `sessions.${operation}() takes a session built by this store (prepare, create or fork)`)
    }
    return session
  }

  /** `session/created`, dispatched so that a synchronous throw vetoes and a rejection is only logged. */
  private announce(log: SessionLog): void {
    const logger = this.home.logger
    announce(this.events, log.filter, 'session/created', [log], (error) =>
      logger.warn('a session/created listener rejected (session %s): %s', log.id, describe(error)),
    )
  }

  /** Removes `log` from the store; emits `session/disposed` when it was announced (created and disposed stay paired). */
  private detach(log: SessionLog, announced: boolean): void {
    if (log.stage !== 'live') return
    log.stage = 'detached'
    if (this.live.get(log.id) === log) this.live.delete(log.id)
    if (!announced) return
    const logger = this.home.logger
    this.home.emitter.emit(log.filter, 'session/disposed', [log], (error) => {
      logger.warn('a session/disposed listener failed (session %s): %s', log.id, describe(error))
    })
  }
}

function freshMeta(id: string, meta: SessionMetaInput | undefined, seedLength: number | undefined): SessionEventMap['session/meta'] {
  if (meta !== undefined && (meta === null || typeof meta !== 'object')) {
    throw new SessionError('INVALID_ARGUMENT', `prepare("${id}"): meta must be an object { cwd?, parentSession? }`)
  }
  // Only the known fields are copied, in the documented order: the optional facts, then createdAt and version.
  const data: Record<string, unknown> = {}
  if (meta?.cwd !== undefined) data.cwd = meta.cwd
  if (meta?.parentSession !== undefined) data.parentSession = meta.parentSession
  if (seedLength !== undefined) data.seedLength = seedLength
  data.createdAt = Date.now()
  data.version = SESSION_FORMAT_VERSION
  return data as SessionEventMap['session/meta']
}

/** The turn open at `boundary` (after the first `boundary` events), if any, with its start and end seqs. */
function openTurnAt(events: readonly AnySessionEvent[], boundary: number): { turn: number; start: number; end?: number } | undefined {
  for (let i = boundary - 1; i >= 0; i--) {
    const event = events[i]!
    if (event.type === 'turn/end') return undefined
    if (event.type === 'turn/start') {
      for (let j = boundary; j < events.length; j++) {
        if (events[j]!.type === 'turn/end') return { turn: event.data.turn, start: i, end: j }
      }
      return { turn: event.data.turn, start: i }
    }
  }
  return undefined
}

/** `FLUSH_FAILED` for what `session/flush`'s parallel dispatch rejected with: the only failure as `cause`, or all of them. */
/** What a flush with nothing to do answers: one shared, already resolved promise. */
const RESOLVED: Promise<void> = Promise.resolve()

function flushFailed(id: string, error: unknown): SessionError {
  const errors: readonly unknown[] = error instanceof AggregateError ? error.errors : [error]
  const text = errors.map((reason) => (reason instanceof Error ? reason.message : String(reason))).join('; ')
  return new SessionError('FLUSH_FAILED', `flushing session "${id}" failed: ${text}`, { cause: errors.length === 1 ? errors[0] : error, errors })
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`
  return String(error)
}
