import { randomUUID } from 'node:crypto'
import Schema from 'schemastery'
import { emitContained } from '@deepseek-ai/dsh-scope'
import { ContainedEmitter } from './contained-dispatch'
import { Context, Service } from './cordis'
import { SessionError } from './errors'
import { EventTypes, type EventTypeInfo, type EventTypeOptions } from './event-types'
import { JsonGuard } from './lossless-json'
import type { SessionProjector } from './projection'
import type { Session } from './session'
import { SessionLog, type SessionHome } from './session-log'
import {
  SESSION_FORMAT_VERSION,
  SessionId,
  type AnySessionEvent,
  type SessionEventMap,
  type SessionEventType,
  type SessionMetaInput,
} from './types'

declare module 'cordis' {
  interface Context {
    sessions: SessionStore
  }
}

/** How `prepare` builds a session: fresh (`meta`), forked (`meta` + `seed`), or loaded (`events`). */
export interface PrepareOptions {
  /** The meta of a fresh or forked session. */
  meta?: SessionMetaInput
  /**
   * A closed-turn prefix to copy (what `fork` passes): the child log is its
   * own `session/meta` followed by these events re-numbered so that `seq`
   * stays the index, with their data and time unchanged.
   */
  seed?: readonly AnySessionEvent[]
  /**
   * A whole log loaded from persistence, `session/meta` first. It is replayed
   * through the same validation, invariants and projection as appends, in one
   * linear pass, and becomes the session's log as is (`loadedLength`).
   */
  events?: readonly AnySessionEvent[]
}

type Dispatcher = { dispatch(type: string, args: unknown[]): Array<(...args: unknown[]) => unknown> }

/**
 * `ctx.sessions`: the in-memory store of live sessions, the only place a
 * session is built, and the registry of event types plugins merge.
 *
 * Lifecycle: `prepare` builds a private session that nobody else sees;
 * `enter` publishes it (`session/created`) and returns the detach bound to
 * that exact object; the detach emits `session/disposed` once. `create` does
 * both and ties the session to the caller's fiber.
 *
 * Unloading the store does not detach sessions by itself: Cordis first unloads
 * every plugin that injects `sessions`, and their teardown detaches the
 * sessions they entered.
 */
export class SessionStore extends Service {
  static readonly Config: Schema<SessionStore.Config> = Schema.object({}).description('dsh-session has no options.')

  private readonly home: SessionHome
  private readonly live = new Map<string, SessionLog>()
  private readonly types = new EventTypes()

  constructor(ctx: Context, _config: SessionStore.Config = {}) {
    super(ctx, 'sessions')
    // `this.ctx` is the caller's context inside methods; the store's own is kept here.
    this.home = { ctx, emitter: new ContainedEmitter(ctx), json: new JsonGuard(), types: this.types, logger: ctx.logger('dsh-session') }
  }

  /**
   * Creates a fresh session and publishes it (`prepare` + `enter`). The
   * session is detached when the calling context's fiber is disposed (also
   * when that happens during the `session/created` dispatch: the detach then
   * runs once the dispatch has unwound, before `create` returns).
   * Throws like `prepare` and `enter` (a vetoing `session/created` listener's
   * error is rethrown).
   */
  create(id: SessionId | string, meta?: SessionMetaInput): Session {
    const session = this.prepare(id, meta === undefined ? {} : { meta })
    const caller = this.ctx
    const release = caller.effect(() => this.enter(session), `sessions.create(${JSON.stringify(id)})`)
    // A `session/created` listener may have disposed the caller's fiber while
    // the session was being announced; the fiber had already collected its
    // effects by then, so release the session now that the dispatch has
    // unwound (the announcement stays paired with its disposal).
    if (caller.fiber.uid === null) release()
    return session
  }

  /**
   * Builds a private session: it is not in `get`/`list`, and its appends are
   * not published, until `enter`. For drivers, which assemble a session (and
   * an agent around it) before publishing both.
   *
   * - Fresh: the log starts with `session/meta { cwd?, parentSession?,
   *   createdAt, version }`.
   * - `seed` (from `fork`): the meta also carries `seedLength`, and the seed
   *   follows, re-numbered; it must be a closed-turn prefix (`OPEN_TURN`).
   * - `events` (from persistence): the log is replayed as loaded; its
   *   `loadedLength` is its length.
   *
   * Every event goes through the checks of `append`; a bad one throws its
   * `SessionError` with the seq, prefixed with what was being built.
   */
  prepare(id: SessionId | string, options: PrepareOptions = {}): Session {
    if (typeof id !== 'string' || id.length === 0) {
      throw new SessionError('INVALID_ARGUMENT', 'a session id must be a non-empty string')
    }
    const { meta, seed, events } = options
    if (events !== undefined && (meta !== undefined || seed !== undefined)) {
      throw new SessionError('INVALID_ARGUMENT', `prepare("${id}"): a loaded log (events) cannot be combined with meta or seed`)
    }
    const log = new SessionLog(SessionId(id), this.home)
    if (events !== undefined) {
      replay(log, events, 0, `cannot load session "${id}"`)
      log.loadedLength = events.length
      return log
    }
    const data = freshMeta(id, meta, seed?.length)
    log.admit('session/meta', data, 0, data.createdAt, undefined)
    if (seed !== undefined) {
      replay(log, seed, 1, `cannot seed session "${id}"`)
      const open = log.position.openTurn
      if (open) {
        throw new SessionError('OPEN_TURN', `cannot seed session "${id}": the seed ends inside turn ${open.turn}; a seed must be a closed-turn prefix`)
      }
    }
    return log
  }

  /**
   * Publishes a prepared session: it becomes visible in `get`/`list`, its
   * appends publish `session/event`, and `session/created` is emitted.
   *
   * - `DUPLICATE_ID` when a live session has the same id; `ALREADY_ENTERED`
   *   when this session was entered before (even if it was vetoed).
   * - A synchronous `session/created` listener throw vetoes the publication:
   *   the session is removed again, `session/disposed` is emitted (so every
   *   listener that saw it created sees it disposed), and the error is
   *   rethrown. A rejected promise from a listener is only logged.
   * - The returned detach is bound to this exact session: it removes it (the
   *   id is free again from then on), emits `session/disposed` once, refuses
   *   further appends (`DETACHED`), and is harmless to call again. A stale
   *   detach never removes a later session with the same id. No detach can
   *   run while `session/created` is being dispatched (the caller gets it
   *   only when `enter` returns), so created and disposed stay paired and
   *   ordered.
   *
   * `enter` does not tie the session to any fiber: the caller owns the
   * detach (a driver detaches after draining its last appends).
   */
  enter(session: Session): () => void {
    const log = this.own(session, 'enter')
    if (log.stage !== 'private') {
      throw new SessionError('ALREADY_ENTERED', `session "${log.id}" was already entered once; prepare a new session to publish it again`)
    }
    if (this.live.has(log.id)) {
      throw new SessionError('DUPLICATE_ID', `a session with id "${log.id}" is already live; detach it first or choose another id`)
    }
    this.live.set(log.id, log)
    log.stage = 'live'
    try {
      this.announce(log)
    } catch (error) {
      this.detach(log)
      throw error
    }
    return () => this.detach(log)
  }

  /** The live session with this id. */
  get(id: SessionId | string): Session | undefined {
    return this.live.get(id)
  }

  /** Every live session, in the order they were entered. */
  list(): Session[] {
    return [...this.live.values()]
  }

  /**
   * The durability checkpoint (R-SES-5): dispatches `session/flush` in
   * parallel, scope-filtered by the session's id, and resolves once every
   * listener has settled. Rejects with `FLUSH_FAILED` (the listeners'
   * errors as `cause`) when one rejects. A private or detached session has
   * nothing to flush and resolves at once.
   */
  async flush(session: Session): Promise<void> {
    const log = this.own(session, 'flush')
    if (log.stage !== 'live') return
    try {
      await this.home.ctx.parallel(log.filter, 'session/flush', log)
    } catch (error) {
      const reasons = error instanceof AggregateError ? error.errors : [error]
      const text = reasons.map((reason) => (reason instanceof Error ? reason.message : String(reason))).join('; ')
      throw new SessionError('FLUSH_FAILED', `flushing session "${log.id}" failed: ${text}`, { cause: error })
    }
  }

  /**
   * Forks `source` (R-SES-6): a new private session (enter it to publish it)
   * whose log is its own `session/meta { cwd, parentSession: source.id,
   * seedLength, … }` followed by a copy of `source`'s events with
   * `seq < boundarySeq` (default: all of them). The copy must end between
   * turns: `OPEN_TURN` otherwise, `INVALID_BOUNDARY` for a boundary that is
   * not an integer in `[0, source.events.length]`. `childId` defaults to
   * `<source id>-fork-<uuid>`.
   */
  fork(source: Session, boundarySeq?: number, childId?: SessionId | string): Session {
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
    return this.prepare(childId ?? `${source.id}-fork-${randomUUID()}`, { meta, seed: events.slice(0, boundary) })
  }

  /**
   * Registers an event type a plugin merged into `SessionEventMap`: appends
   * (and loads) of unregistered, non-built-in types are refused with
   * `UNKNOWN_TYPE`. Reverts with the caller's fiber; the returned function
   * reverts early. Registrations of one type stack, the newest winning.
   * Registrations are global, whatever the caller's scope.
   */
  registerType<K extends SessionEventType>(type: K, options: EventTypeOptions<K> = {}): () => void {
    const dispose = this.ctx.effect(() => this.types.add(type, options), `sessions.registerType(${JSON.stringify(type)})`)
    return () => void dispose()
  }

  /** Shorthand for `registerType(type, { projector })`. */
  projector<K extends SessionEventType>(type: K, projector: SessionProjector<K>): () => void {
    return this.registerType(type, { projector })
  }

  /** What the store knows about a type (built in or registered), or `undefined`. For loaders (R-PER-4). */
  typeInfo(type: string): EventTypeInfo | undefined {
    return this.types.info(type)
  }

  private own(session: Session, operation: string): SessionLog {
    if (!(session instanceof SessionLog) || session.home !== this.home) {
      throw new SessionError('INVALID_ARGUMENT', `sessions.${operation}() takes a session built by this store (prepare, create or fork)`)
    }
    return session
  }

  /** `session/created`, dispatched so that a synchronous throw vetoes and a rejection is only logged. */
  private announce(log: SessionLog): void {
    const { ctx, logger } = this.home
    const callbacks = (ctx.events as unknown as Dispatcher).dispatch('emit', [log.filter, 'session/created', log])
    for (const callback of callbacks) {
      const result = callback(log) as PromiseLike<unknown> | undefined
      if (result && typeof result.then === 'function') {
        result.then(undefined, (error) => logger.warn('a session/created listener rejected (session %s): %s', log.id, describe(error)))
      }
    }
  }

  private detach(log: SessionLog): void {
    if (log.stage !== 'live') return
    log.stage = 'detached'
    if (this.live.get(log.id) === log) this.live.delete(log.id)
    const { ctx, logger } = this.home
    emitContained(ctx, log.filter, 'session/disposed', [log], (error) => {
      logger.warn('a session/disposed listener failed (session %s): %s', log.id, describe(error))
    })
  }
}

export namespace SessionStore {
  export interface Config {}
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

/** Replays `events` into `log` starting at `offset` (their seqs become `offset + index`). */
function replay(log: SessionLog, events: readonly AnySessionEvent[], offset: number, context: string): void {
  if (!Array.isArray(events)) throw new SessionError('INVALID_ARGUMENT', `${context}: the events must be an array`)
  if (offset === 0 && events.length === 0) {
    throw new SessionError('INVALID_EVENT', `${context}: the log is empty (a session log starts with session/meta)`)
  }
  let i = 0
  try {
    for (; i < events.length; i++) {
      const event = events[i] as Partial<AnySessionEvent> & { ignorable?: unknown }
      if (event === null || typeof event !== 'object') {
        throw new SessionError('INVALID_EVENT', `event ${i} is not an object`, { seq: offset + i })
      }
      if (offset === 0 && event.seq !== i) {
        throw new SessionError('INVARIANT', `seq must be dense from 0: event ${i} has seq ${event.seq}`, { seq: i })
      }
      if (typeof event.time !== 'number' || !Number.isFinite(event.time)) {
        throw new SessionError('INVALID_EVENT', `event ${i} (${event.type}) has no valid time`, { seq: offset + i })
      }
      log.admit(event.type as string, event.data, offset + i, event.time, event.ignorable === true)
    }
  } catch (error) {
    if (!(error instanceof SessionError)) throw error
    throw new SessionError(error.code, `${context}: ${error.message}`, {
      seq: error.seq,
      type: error.type,
      path: error.path,
      cause: error,
    })
  }
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

function describe(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`
  return String(error)
}
