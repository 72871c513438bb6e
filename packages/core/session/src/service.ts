import Schema from 'schemastery'
import { untraced } from '@deepseek-ai/dsh-scope'
import { Context, Service } from './cordis'
import { recordBoundListeners } from './log/bound-listeners'
import type { EventTypeInfo, EventTypeOptions } from './event-types'
import { observeSessions, type SessionObserveOptions, type SessionObserver } from './observers'
import type { SessionProjector } from './projection'
import type { PrepareOptions } from './prepare-options'
import type { Session } from './session'
import type { SessionEntry } from './session-entry'
import { SessionRegistry } from './session-registry'
import type { SessionEventType, SessionId, SessionMetaInput } from './types'

declare module 'cordis' {
  interface Context {
    sessions: SessionStore
  }
}

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

  private readonly registry: SessionRegistry

  constructor(ctx: Context, _config: SessionStore.Config = {}) {
    super(ctx, 'sessions')
    untraced(this)
    this.registry = new SessionRegistry(ctx)
    // `ctx.on('session/event')` listeners registered from now on are called without Cordis' tracing proxy when it would pass everything through unchanged (`log/bound-listeners.ts`).
    ctx.effect(() => recordBoundListeners(ctx), 'sessions: record what ctx.on wraps')
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
    return this.registry.create(this.ctx, id, meta)
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
   *   A private fork's own events are taken as that fork (see
   *   `PrepareOptions.seed`).
   * - `events` (from persistence): the log is replayed as loaded; its
   *   `loadedLength` is its length.
   *
   * Every event goes through the checks of `append`; a bad one throws its
   * `SessionError` with the seq, prefixed with what was being built.
   */
  prepare(id: SessionId | string, options: PrepareOptions = {}): Session {
    return this.registry.prepare(id, options)
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
    return this.registry.enter(session)
  }

  /**
   * Enters a prepared session like `enter`, without announcing it yet: it is
   * in `get`/`list` at once (and its appends publish `session/event`, so
   * append nothing before `announce`), and `session/created` is emitted by
   * the returned entry's `announce()`. Throws `DUPLICATE_ID` and
   * `ALREADY_ENTERED` as `enter` does. For drivers that publish a session
   * together with another object: enter both, then announce both.
   */
  enterUnannounced(session: Session): SessionEntry {
    return this.registry.enterUnannounced(session)
  }

  /** The live session with this id. */
  get(id: SessionId | string): Session | undefined {
    return this.registry.get(id)
  }

  /** Every live session, in the order they were entered. */
  list(): Session[] {
    return this.registry.list()
  }

  /**
   * The durability checkpoint (R-SES-5): dispatches `session/flush` in
   * parallel, scope-filtered by the session's id, and resolves once every
   * listener has settled. Rejects with `FLUSH_FAILED` when one rejects: its
   * `errors` hold every listener's failure, and its `cause` is that failure
   * itself when exactly one listener failed (so a backend's typed error, with
   * its `code` and `file`, is one step away), else their `AggregateError`.
   * Rejects with `PERSISTENCE_DETACHED` when the session was claimed by a
   * backend (`claim`) and no claim holds it any more while it lives: the
   * backend was unplugged, and what was appended since is stored nowhere.
   * A private or detached session has nothing to flush and resolves at once.
   */
  flush(session: Session): Promise<void> {
    return this.registry.flush(session)
  }

  /**
   * Whether `flush(session)` has anything to do: it would dispatch
   * `session/flush` (a persistence backend listens) or reject (a session of
   * another store, or `PERSISTENCE_DETACHED`). When it answers false, `flush`
   * would resolve at once and do nothing, so a caller that flushes on a hot
   * path (the agent loop, several times per turn) may skip the call and its
   * promise. Synchronous; it never throws and changes nothing.
   */
  flushes(session: Session): boolean {
    return this.registry.flushes(session)
  }

  /**
   * For persistence backends: records that the caller persists `session`
   * (`holder` names it in messages, e.g. `dsh-session-jsonl`) until the
   * returned function is called (calling it twice is harmless). A backend
   * claims each live session it takes on and releases the claim when it
   * stops writing it. Once a session has been claimed, a `flush` while it is
   * live and no claim holds it rejects with `PERSISTENCE_DETACHED` instead of
   * resolving with nobody listening: unplugging only the persistence plugin
   * is loud, and the agent loop's refused-write rule takes over. A session
   * never claimed (no backend mounted) flushes as before. Claims are not tied
   * to the caller's fiber: the backend releases them when its writer closes
   * (after the teardown that takes the sessions, it has nothing left to
   * release).
   */
  claim(session: Session, holder: string): () => void {
    return this.registry.claim(session, holder)
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
    return this.registry.fork(source, boundarySeq, childId)
  }

  /**
   * Registers an event type a plugin merged into `SessionEventMap`: appends
   * (and loads) of unregistered, non-built-in types are refused with
   * `UNKNOWN_TYPE`. Reverts with the caller's fiber; the returned function
   * reverts early. Registrations of one type stack, the newest winning.
   * Registrations are global, whatever the caller's scope.
   */
  registerType<K extends SessionEventType>(type: K, options: EventTypeOptions<K> = {}): () => void {
    return this.registry.registerType(this.ctx, type, options)
  }

  /** Shorthand for `registerType(type, { projector })`. */
  projector<K extends SessionEventType>(type: K, projector: SessionProjector<K>): () => void {
    return this.registry.registerType(this.ctx, type, { projector })
  }

  /**
   * Observes every event committed to a live session: a `session/event`
   * listener registered in the caller's context, without Cordis' per-call
   * tracing wrapper (see `observeSessions`, the same call for code that does
   * not inject the store). It is called by the same contained dispatch as the
   * `ctx.on('session/event')` listeners, in registration order among them,
   * filtered by the caller's scope (unless `{ global: true }`), with its
   * failures contained and logged. Reverts with the caller's fiber; the
   * returned function reverts early.
   *
   * Use it for consumers that run for every streamed chunk (persistence,
   * invariant checkers, UI streams), also those that may register before the
   * store loads: a `ctx.on('session/event')` listener registered before the
   * store loaded costs about a microsecond more per event, because Cordis
   * re-traces `this` and every argument of each call (one registered while
   * the store is loaded is called without that proxy when it would change
   * nothing: `log/bound-listeners.ts`). Use `ctx.on` for everything else; it
   * is the ordinary Cordis listener, visible to `internal/listener`
   * interceptors.
   */
  observe(observer: SessionObserver, options?: SessionObserveOptions): () => void {
    return observeSessions(this.ctx, observer, options)
  }

  /** What the store knows about a type (built in or registered), or `undefined`. For loaders (R-PER-4). */
  typeInfo(type: string): EventTypeInfo | undefined {
    return this.registry.typeInfo(type)
  }
}

export namespace SessionStore {
  export interface Config {}
}

