import type { Session } from '../session'
import type { AnySessionEvent } from '../types'

/**
 * One live session's writer, as `LiveSessions` drives it: a backend's writer
 * around a `WriteBehind`.
 */
export interface LiveWriter {
  /** The seq of the next event the writer needs: everything before it is stored or queued. */
  readonly nextSeq: number
  /** The failure that stopped the writer, if it has stopped (its flushes reject with it). */
  readonly failed: Error | undefined
  /**
   * Queues `event`, whose seq is `nextSeq`. Never throws: a writer that has
   * failed ignores it, and one that cannot encode it fails (sticky) instead.
   */
  enqueue(event: AnySessionEvent): void
  /** Resolves once every event queued before the call is durable; rejects with the writer's failure. */
  flush(): Promise<void>
}

/** What a persistence backend supplies for its live sessions; `LiveSessions` does the rest. */
export interface LiveSessionBackend<W extends LiveWriter> {
  /** Who persists the sessions: the holder of the store claims (`ctx.sessions.claim`), e.g. `dsh-session-jsonl`. */
  readonly name: string
  /**
   * Takes on a live session: locks it, synchronously, and returns its writer,
   * continuing what the storage holds (`nextSeq` says from where: 0 for a
   * new session, `session.loadedLength` for one it loaded). Throws a typed
   * error to refuse it; on `session/created` that vetoes the publication.
   */
  open(session: Session): W
  /**
   * Drains, syncs and releases the writer of a disposed session. Called
   * synchronously from `session/disposed`: from then on the writer serves no
   * live session (a load of the id may wait for it). Runs in the background;
   * the shutdown awaits it.
   */
  close(writer: W): Promise<void>
  /**
   * Releases the writer of a session whose publication was rolled back,
   * dropping its queue: nothing of the session may reach the storage (its id
   * stays free there).
   */
  drop(writer: W, reason: string): Promise<void>
  /** Closes everything the backend still holds (the live writers too) when the plugin goes. Awaited by the shutdown. */
  closeAll(): Promise<void>
  /** The error the flushes of a session the backend could not take on reject with (`cause` is what `open` threw). */
  refusal(session: Session, cause: unknown): Error
  /** Reports what nobody awaits: a background close that failed, a session refused. */
  warn(error: unknown): void
}

/** Where `LiveSessions` keeps the store claims (`ctx.sessions.claim`); absent without a store. */
export type ClaimSession = (session: Session, holder: string) => () => void

interface Entry<W> {
  readonly writer: W
  readonly release: () => void
}

/**
 * The wiring of a persistence backend to the live sessions of `ctx.sessions`
 * (R-PER-1), shared by every backend; `persistLiveSessions` connects it to
 * the session events.
 *
 * - `attach` (`session/created`): opens the session's writer (a throw vetoes
 *   the publication), claims the session in the store, and queues every
 *   event the storage lacks.
 * - `record` (`session/event`, the hot path): queues the event, catching up
 *   on anything missed. A session it has not seen (the plugin was mounted,
 *   or mounted again, after it was created) is taken on there (`adopt`); one
 *   that cannot be is refused once: logged, and its flushes reject.
 * - `flush` (`session/flush`): catches up and resolves once the writer's
 *   queue is durable.
 * - `detach` (`session/disposed`): catches up, releases the claim and closes
 *   in the background. A session disposed in the tick it was published,
 *   with nothing appended since, is a vetoed or rolled-back publication: its
 *   writer is dropped, so nothing of it reaches the storage.
 * - `shutdown` (the plugin goes): when the teardown takes the sessions too,
 *   it first waits until each live session has been disposed by its owner
 *   (`whenDetached`), still writing, so the tail a settling agent appends is
 *   stored; otherwise the sessions outlive the backend: their claims are
 *   released (their later flushes reject with `PERSISTENCE_DETACHED`) and
 *   everything is closed at once.
 */
export class LiveSessions<W extends LiveWriter> {
  private readonly live = new Map<Session, Entry<W>>()
  /** Live sessions the backend could not take on, with the reason; their flushes reject with it. */
  private readonly refused = new WeakMap<Session, Error>()
  /** Closes started by `detach`, awaited by the shutdown. */
  private readonly background = new Set<Promise<void>>()
  /** Sessions published in the current tick, with their length at `session/created`. */
  private readonly announcing = new Map<Session, number>()
  /** `whenDetached()` callers, told when no live session is left. */
  private detachedWaiters: Array<() => void> = []
  /** The last session `record` saw, and its entry: a stream appends to one session at a time. */
  private lastSession: Session | undefined
  private lastEntry: Entry<W> | undefined

  constructor(
    private readonly backend: LiveSessionBackend<W>,
    private readonly claim: () => ClaimSession | undefined,
  ) {}

  /** The writer serving a live session, if this backend took it on. */
  writerOf(session: Session): W | undefined {
    return this.live.get(session)?.writer
  }

  /** `session/created`: open, claim and queue what the storage lacks. A throw vetoes the publication. */
  attach(session: Session): void {
    if (this.live.has(session)) return
    const writer = this.backend.open(session)
    const release = this.claim()?.(session, this.backend.name) ?? noop
    this.live.set(session, { writer, release })
    this.catchUp(writer, session)
    // A vetoed or rolled-back publication disposes the session synchronously, before anything is
    // appended to it; until then nothing of it has reached the storage (writes start on a timer).
    this.announcing.set(session, session.events.length)
    queueMicrotask(() => this.announcing.delete(session))
  }

  /** `session/event`: the hot path. Catches up on anything missed, normally just `event`. */
  record(session: Session, event: AnySessionEvent): void {
    let entry = session === this.lastSession ? this.lastEntry : this.live.get(session)
    if (entry === undefined) {
      entry = this.adopt(session)
      if (entry === undefined) return
    }
    this.lastSession = session
    this.lastEntry = entry
    const writer = entry.writer
    const next = writer.nextSeq
    if (event.seq < next) return
    if (event.seq === next) return writer.enqueue(event)
    const events = session.events
    for (let seq = next; seq <= event.seq; seq++) writer.enqueue(events[seq]!)
  }

  /** `session/flush`: the durability checkpoint of one live session. */
  async flush(session: Session): Promise<void> {
    const entry = this.live.get(session) ?? this.adopt(session)
    if (entry === undefined) {
      const reason = this.refused.get(session)
      if (reason) throw reason
      return
    }
    // Events appended before this backend saw them (none, normally).
    this.catchUp(entry.writer, session)
    await entry.writer.flush()
  }

  /** `session/disposed`: drain, sync and close in the background (or drop a rolled-back publication). */
  detach(session: Session): void {
    const entry = this.live.get(session)
    if (entry === undefined) return
    const { writer } = entry
    const rolledBack = this.announcing.get(session) === session.events.length
    // Events the observer did not see (it is removed first when the plugin is disposed).
    if (!rolledBack) this.catchUp(writer, session)
    this.forget(session, entry)
    const closing = (rolledBack ? this.backend.drop(writer, 'its publication was vetoed') : this.backend.close(writer)).catch((error) =>
      this.warnOnce(writer, error),
    )
    this.background.add(closing)
    void closing.finally(() => this.background.delete(closing))
    this.checkDetached()
  }

  /**
   * Resolves once no live session is left: every session this backend took
   * on has been disposed (its close may still run; `shutdown` awaits those).
   * Sessions taken on meanwhile are waited for too.
   */
  whenDetached(): Promise<void> {
    return new Promise((resolve) => {
      this.detachedWaiters.push(resolve)
      this.checkDetached()
    })
  }

  /**
   * The backend goes: waits for the live sessions when `waitForSessions`
   * (the teardown takes them too), then releases the claims of those still
   * live and closes everything. Never rejects; failures are reported.
   */
  async shutdown(waitForSessions: boolean): Promise<void> {
    try {
      if (waitForSessions) await this.whenDetached()
      for (const [session, entry] of [...this.live]) this.forget(session, entry)
      await Promise.all([this.backend.closeAll(), ...this.background])
    } catch (error) {
      this.backend.warn(error)
    }
  }

  private forget(session: Session, entry: Entry<W>): void {
    this.live.delete(session)
    if (this.lastSession === session) this.lastSession = this.lastEntry = undefined
    entry.release()
  }

  private checkDetached(): void {
    if (this.detachedWaiters.length === 0 || this.live.size !== 0) return
    for (const resolve of this.detachedWaiters.splice(0)) resolve()
  }

  private catchUp(writer: W, session: Session): void {
    const events = session.events
    for (let seq = writer.nextSeq; seq < events.length; seq++) writer.enqueue(events[seq]!)
  }

  /**
   * A live session this backend did not see created: take it on now. One
   * that cannot be taken on is remembered, logged once, and its flushes
   * reject with the reason.
   */
  private adopt(session: Session): Entry<W> | undefined {
    if (this.refused.has(session)) return undefined
    try {
      this.attach(session)
      return this.live.get(session)
    } catch (error) {
      const reason = this.backend.refusal(session, error)
      this.refused.set(session, reason)
      this.backend.warn(reason)
      return undefined
    }
  }

  /** Logs a failed close, unless it is the writer's own failure, which was logged when it happened. */
  private warnOnce(writer: W, error: unknown): void {
    if (error !== writer.failed) this.backend.warn(error)
  }
}

function noop(): void {}
