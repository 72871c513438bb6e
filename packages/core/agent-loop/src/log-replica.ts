import type { Message } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent, EventTypeInfo, Session, SessionEvent, SessionProjection } from '@deepseek-ai/dsh-session'

/** Where a log event's messages cannot be rebuilt, and why. */
export interface Opaque {
  readonly seq: number
  readonly type: string
  readonly reason: string
}

/**
 * The message list, the last `request/header` and the open step, rebuilt from
 * one session's log alone, one event at a time. This is a second,
 * independent implementation of the projection rules (spec §6, R-SES-3): it
 * never reads `deriveMessages()`. It only moves forward, so checking every
 * request of a session costs one pass over the log in total.
 */
export class LogReplica {
  /** The next seq to read. */
  next = 0
  messages: Message[] = []
  /** The position of each message, which shadows refer to: the seq of its event, or a shadow's `from`. */
  private positions: number[] = []
  /** The seq of the event that produced each message. */
  private origins: number[] = []
  /** Bumped whenever a shadow rewrites entries before the end: earlier comparisons no longer hold. */
  epoch = 0
  header: SessionEvent<'request/header'> | undefined
  openStep: { readonly turn: number; readonly step: number; readonly seq: number } | undefined
  /** The first event whose messages could not be rebuilt. */
  opaque: Opaque | undefined

  constructor(
    private readonly session: Session,
    private readonly typeInfo: (type: string) => EventTypeInfo | undefined,
  ) {}

  /** The seq of the event the message at `index` came from. */
  originOf(index: number): number | undefined {
    return this.origins[index]
  }

  /** Reads the log up to `seq` inclusive (or to its end). */
  advance(seq: number): void {
    const events = this.session.events
    const last = Math.min(seq, events.length - 1)
    while (this.next <= last) {
      this.read(events[this.next]!, this.next)
      this.next++
    }
  }

  private read(event: AnySessionEvent, seq: number): void {
    switch (event.type) {
      case 'user/message':
      case 'steering/message':
      case 'tool/result':
        this.append(seq, [event.data.message])
        return
      case 'assistant/message':
        // An empty anchor (failed call, rejected step result) is log-only.
        if (event.data.message.content.length > 0) this.append(seq, [event.data.message])
        return
      case 'request/header':
        this.header = event
        return
      case 'step/start':
        this.openStep = { turn: event.data.turn, step: event.data.step, seq }
        return
      case 'step/end':
        this.openStep = undefined
        return
      case 'session/meta':
      case 'turn/start':
      case 'turn/end':
      case 'assistant/chunk':
      case 'tool/call':
      case 'todo/write':
      case 'inbox/enqueue':
      case 'inbox/dequeue':
      case 'inbox/discard':
      case 'inbox/requeue':
        return
      default:
        this.readOther(event, seq)
    }
  }

  /** A type this file does not name: log-only if built in; a merged one is projected only by its registered projector. */
  private readOther(event: AnySessionEvent, seq: number): void {
    const type = event.type as string
    const info = this.typeInfo(type)
    if (info === undefined) {
      // The session loads an unknown type only when it was marked ignorable, and then as log-only.
      if (event.ignorable === true) return
      this.opaque ??= { seq, type, reason: `${type} is no longer registered, so what it projected is unknown` }
      return
    }
    if (info.builtIn || !info.projected) return
    const projector = info.projector
    if (typeof projector !== 'function') {
      this.opaque ??= { seq, type, reason: `${type} has a projector that ctx.sessions does not expose (typeInfo(type).projector)` }
      return
    }
    let projection: SessionProjection | undefined | void
    try {
      projection = projector(event, this.viewBefore(seq))
    } catch (error) {
      this.opaque ??= { seq, type, reason: `the projector of ${type} threw when replayed: ${error instanceof Error ? error.message : String(error)}` }
      return
    }
    if (!projection) return
    const messages = projection.messages ?? []
    if (projection.shadow) this.shadow(seq, projection.shadow.from, projection.shadow.to, messages)
    else this.append(seq, messages)
  }

  private append(seq: number, messages: readonly Message[], position = seq): void {
    for (const message of messages) {
      this.messages.push(message)
      this.positions.push(position)
      this.origins.push(seq)
    }
  }

  /** The event at `seq` replaces the messages positioned in `[from, to)` by `messages`, positioned at `from`, in new arrays. */
  private shadow(seq: number, from: number, to: number, messages: readonly Message[]): void {
    let lo = 0
    while (lo < this.positions.length && this.positions[lo]! < from) lo++
    let hi = lo
    while (hi < this.positions.length && this.positions[hi]! < to) hi++
    if (lo === hi && hi === this.messages.length) {
      this.append(seq, messages, from)
      return
    }
    const spliced = <T>(list: T[], inserted: T[]) => [...list.slice(0, lo), ...inserted, ...list.slice(hi)]
    this.messages = spliced(this.messages, [...messages])
    this.positions = spliced(this.positions, messages.map(() => from))
    this.origins = spliced(this.origins, messages.map(() => seq))
    this.epoch++
  }

  /**
   * The session as a projector saw it when the event at `seq` was appended:
   * the log before it and the history derived so far. `position` and
   * `lastTurn` are the live ones (a projector must not depend on them: they are
   * not part of a replay); `lastSeq` is the replayed one.
   */
  private viewBefore(seq: number): Session {
    const session = this.session
    const history = this.messages.slice()
    let events: readonly AnySessionEvent[] | undefined
    return {
      id: session.id,
      get meta() {
        return session.meta
      },
      get events() {
        return (events ??= session.events.slice(0, seq))
      },
      get position() {
        return session.position
      },
      loadedLength: session.loadedLength,
      lastSeq: seq - 1,
      get lastTurn() {
        return session.lastTurn
      },
      append() {
        throw Object.assign(new Error('a projector must not append (it is being replayed by dsh-agent-loop/invariant)'), {
          code: 'REENTRANT_APPEND',
        })
      },
      typeAt: (at: number) => (at < seq ? session.typeAt(at) : undefined),
      deriveMessages: () => history,
    }
  }
}
