import type { Message } from '@deepseek-ai/dsh-llm'
import { subjectFilter, type ContainedEmitter, type SubjectFilter } from '@deepseek-ai/dsh-scope'
import { builtInKind, BUILT_IN_KINDS, BUILT_IN_TYPES, Kind } from './built-in-types'
import { ChunkPack } from './log/chunk-pack'
import { primeChunkPathOnce } from './log/chunk-feedback'
import { chunkDataShape, envelopeIsPlain, freezeChunk, type Shape } from './log/chunk-shape'
import type { Context, Logger } from './cordis'
import { describeError, SessionError } from './errors'
import type { EventTypes, RegisteredType } from './event-types'
import { shapeProblem } from './event-shapes'
import { LogStructure } from './log-structure'
import { emptyList, filled, presized } from './log/lists'
import { createEventsView } from './log/events-view'
import { SessionEventDispatch } from './log/event-dispatch'
import type { PackedLog } from './log/slots'
import { SlotList } from './log/slot-list'
import { formatPath, type JsonGuard } from './log/lossless-json'
import { DerivedHistory, type SessionProjection } from './projection'
import { defaultProjection, projectionProblem } from './projection-checks'
import { Envelope, newEnvelope, now } from './log/envelope'
import { freezeTrusted, freezeUnfrozen } from './log/trusted-json'
import type { Session, SessionPosition } from './session'
import type { AnySessionEvent, SessionEvent, SessionEventMap, SessionEventType, SessionId } from './types'

/** What every session of one store shares. */
export interface SessionHome {
  /** The store's own context. */
  readonly ctx: Context
  /** Dispatches `session/event` and `session/disposed`, listener failures contained (dsh-scope). */
  readonly emitter: ContainedEmitter
  readonly types: EventTypes
  readonly logger: Logger
  /** Validates and freezes event data (one per store; appends are not reentrant there). */
  readonly json: JsonGuard
}

/** Where a session is in its life: built privately, published in the store, or detached. */
export type SessionStage = 'private' | 'live' | 'detached'

const noMessages: readonly Message[] = []

/**
 * The `Session` implementation. Package-internal: sessions are built by the
 * store (`prepare`, `create`, `fork`) and published by `enter`.
 *
 * One append is: validate lossless JSON → check the data's shape and the log's
 * structure → deep-freeze → project → commit (push, advance the structure,
 * extend the history) → publish `session/event` when the session is live.
 * Everything before the commit may throw and leaves the log unchanged.
 *
 * `assistant/chunk` data of a documented shape (`chunk-shape.ts`) is checked
 * field by field instead of walked, and once the chunk has reached every
 * `session/event` listener it is packed into `pack`: its slot holds the
 * packed index instead of the event, and `events[seq]` rebuilds it on read.
 */
export class SessionLog implements Session, PackedLog {
  /**
   * The log: each entry is the event, or the index of a packed chunk in `pack` (packed runs: `SlotList`).
   * Its first `length` entries are committed; a session replaying a loaded log it adopted (`adopt`) holds
   * the rest of that log beyond them.
   */
  slots = new SlotList()
  /** The number of committed entries (the log's length, what `events` shows). */
  length = 0
  /** Built with the log (not on its first chunk): the pack's construction never runs inside the chunk path. */
  pack: ChunkPack | undefined = new ChunkPack()
  /** The read-only view readers get (`session.events`). */
  readonly events: readonly AnySessionEvent[]
  loadedLength = 0
  stage: SessionStage = 'private'
  /** Set while `session/created` is being dispatched for this session. */
  announcing = false
  /** The filter every dispatch about this session uses, built once. */
  readonly filter: SubjectFilter

  private readonly structure = new LogStructure()
  private readonly history = new DerivedHistory()
  private projecting = false
  private publishing = false
  private readonly backlog: AnySessionEvent[] = emptyList<AnySessionEvent>(EVENT_SAMPLE)
  private readonly onListenerError: (error: unknown) => void
  /** Publishes `session/event` for this session (the filter's verdicts cached). */
  private readonly dispatch: SessionEventDispatch
  /**
   * Chunks committed in a documented shape and not packed yet, with their
   * shapes: they are packed as soon as no publication is running, i.e. once
   * each has reached every `session/event` listener as the object it was
   * committed as.
   */
  private readonly unpacked: AnySessionEvent[] = filled(EVENT_SAMPLE, UNPACKED_CAPACITY)
  private readonly unpackedShapes: Shape[] = presized(UNPACKED_CAPACITY) as Shape[]
  private unpackedCount = 0

  constructor(
    readonly id: SessionId,
    readonly home: SessionHome,
  ) {
    // Before the process's first session streams: see `chunk-feedback.ts`.
    primeChunkPathOnce()
    this.filter = subjectFilter(id)
    this.events = createEventsView(this)
    this.onListenerError = (error) => {
      home.logger.warn('a session/event listener failed (session %s): %s', id, describeError(error))
    }
    this.dispatch = new SessionEventDispatch(home.emitter, this.filter, this, this.onListenerError)
  }

  get meta(): SessionEventMap['session/meta'] {
    return (this.slots.get(0) as SessionEvent<'session/meta'>).data
  }

  get position(): SessionPosition {
    return this.structure.position
  }

  get lastSeq(): number {
    return this.length - 1
  }

  get lastTurn(): number {
    return this.structure.lastTurn
  }

  append<K extends SessionEventType>(type: K, data: SessionEventMap[K]): SessionEvent<K> {
    if (this.stage === 'detached') {
      throw new SessionError('DETACHED', `session "${this.id}" was detached from the store; nothing can be appended to it any more`, { type })
    }
    let event: AnySessionEvent
    let shape: Shape | -1
    if (type === 'assistant/chunk' && !this.projecting && typeof data === 'object' && data !== null && (shape = chunkDataShape(data)) !== -1) {
      event = this.admitChunk(data as unknown as ChunkData, shape, this.length, Date.now(), undefined)
    } else {
      event = this.admit(type, data, this.length, Date.now(), undefined)
    }
    if (this.stage === 'live') this.publish(event)
    if (this.unpackedCount !== 0 && !this.publishing) this.packChunks()
    return event as SessionEvent<K>
  }

  /**
   * `append` for built-in data a driver built from values already lossless JSON of the right shape (see
   * `appendBuilt`): no lossless-JSON walk or shape check; the structure check, the freeze of what is not frozen
   * yet, the commit, the projection and the publication are `append`'s. Any other type goes through `append`.
   *
   * One function on purpose (a turn's events run here): split, its admission was compiled alone and again
   * inside the caller that inlined it, and each event paid one more call while unoptimized.
   */
  appendBuilt<K extends SessionEventType>(type: K, data: SessionEventMap[K]): SessionEvent<K> {
    const kind = BUILT_IN_KINDS[type]
    if (kind === undefined || kind === Kind.AssistantChunk || this.stage === 'detached') return this.append(type, data)
    const seq = this.length
    if (this.projecting) throw reentrant(this.id, type, seq)
    if (data === null || typeof data !== 'object' || Array.isArray(data)) {
      throw new SessionError('INVALID_EVENT', `${type} data must be a plain object`, { type, seq, path: 'data' })
    }
    this.structure.check(kind, type, data, seq, this.slots)
    if (!Object.isFrozen(data)) freezeUnfrozen(data)
    const event = Object.freeze(new Envelope(BUILT_IN_TYPES[kind], seq, now(), data)) as unknown as AnySessionEvent
    // Commit: nothing below throws.
    this.slots.put(seq, event)
    this.length = seq + 1
    this.structure.apply(kind, data, seq)
    const message = defaultProjection(kind, data as Record<string, any>)
    if (message !== undefined) this.history.addOne(seq, message)
    // A step's chunks share pages: close its page, so the pending parts do not outlive the step.
    else if (kind === Kind.StepEnd) this.pack?.seal()
    if (this.stage === 'live') this.publish(event)
    if (this.unpackedCount !== 0 && !this.publishing) this.packChunks()
    return event as SessionEvent<K>
  }

  /** `append` apart from the per-chunk path (`appendChecked`) for a driver's occasional events (a request header): `append` meets chunks. */
  appendEvent<K extends SessionEventType>(type: K, data: SessionEventMap[K]): SessionEvent<K> {
    if (this.stage === 'detached') {
      throw new SessionError('DETACHED', `session "${this.id}" was detached from the store; nothing can be appended to it any more`, { type })
    }
    const event = this.admit(type, data, this.length, now(), undefined)
    if (this.stage === 'live') this.publish(event)
    if (this.unpackedCount !== 0 && !this.publishing) this.packChunks()
    return event as SessionEvent<K>
  }

  deriveMessages(): readonly Message[] {
    return this.history.snapshot()
  }

  typeAt(seq: number): SessionEventType | undefined {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.length) return undefined
    const slot = this.slots.get(seq)!
    return typeof slot === 'number' ? 'assistant/chunk' : slot.type
  }

  /**
   * Validates, freezes, projects and commits one event at `seq` (always the current length). `loadedIgnorable` is
   * `undefined` for a live append, and the event's persisted mark for a replayed one. `loaded` is the loaded envelope
   * itself (a plain `{ type, seq, time, data, ignorable? }` whose seq is `seq`): it becomes the log entry, frozen in
   * place with the canonical type string, instead of a copy, so a resumed log holds one envelope per event. `trusted`
   * data is lossless JSON by construction (a backend parsed it): the lossless-JSON walk is skipped, everything else
   * runs. Data built by a driver is admitted by `appendBuilt` instead. The caller packs the chunks it committed
   * (`packChunks`) once no publication runs.
   */
  admit(
    type: string,
    data: unknown,
    seq: number,
    time: number,
    loadedIgnorable: boolean | undefined,
    loaded?: Record<string, unknown>,
    trusted = false,
  ): AnySessionEvent {
    if (this.projecting) throw reentrant(this.id, type, seq)
    if (typeof type !== 'string') throw new SessionError('INVALID_EVENT', `an event type must be a string, got ${typeof type}`, { seq })
    if (type === 'assistant/chunk' && typeof data === 'object' && data !== null) {
      const shape = chunkDataShape(data)
      if (shape !== -1) return this.admitChunk(data as ChunkData, shape, seq, time, loaded)
    }
    const kind = builtInKind(type)
    let registered: RegisteredType | undefined
    let canonicalType = type
    let ignorable = false
    if (kind !== undefined) {
      canonicalType = BUILT_IN_TYPES[kind]
    } else {
      registered = this.home.types.get(type)
      if (registered) canonicalType = registered.type
      ignorable = loadedIgnorable ?? registered?.ignorable ?? false
      if (!registered && !ignorable) {
        throw new SessionError(
          'UNKNOWN_TYPE',
          `${type} is not a known event type: register it with ctx.sessions.registerType(${JSON.stringify(type)}, …) before appending (or loading) it`,
          { type, seq },
        )
      }
    }
    if (data === null || typeof data !== 'object' || Array.isArray(data)) {
      throw new SessionError('INVALID_EVENT', `${type} data must be a plain object`, { type, seq, path: 'data' })
    }
    const json = this.home.json
    if (!trusted) {
      const problem = json.problem(data)
      if (problem) {
        const path = formatPath('data', problem.path)
        throw new SessionError('INVALID_EVENT', `${type} ${path} ${problem.reason}`, { type, seq, path })
      }
    }
    if (kind !== undefined) {
      const shape = shapeProblem(kind, data)
      // Shape problems start with the path they are about (`data.turn must be …`).
      if (shape) throw new SessionError('INVALID_EVENT', `${type}: ${shape}`, { type, seq, path: shape.slice(0, shape.indexOf(' ')) })
    }
    this.structure.check(kind, type, data, seq, this.slots)
    if (trusted) freezeTrusted(data)
    else json.freezeChecked()
    const event = this.envelope(canonicalType, seq, time, data, ignorable, loaded)
    let projection: SessionProjection | undefined
    if (kind === undefined) {
      if (registered?.projector) projection = this.project(registered, event)
    }
    // Commit: nothing below throws.
    this.slots.put(seq, event)
    this.length = seq + 1
    if (kind !== undefined) {
      this.applyBuiltIn(kind, data as Record<string, any>, seq)
    } else if (projection) {
      const messages = projection.messages ?? noMessages
      if (projection.shadow) this.history.replace(projection.shadow.from, projection.shadow.to, messages)
      else if (messages.length) this.history.add(seq, messages)
    }
    return event
  }

  /** The commit's second half for a built-in event at `seq`, already in the log: the structure moves and the history grows. */
  private applyBuiltIn(kind: Kind, data: Record<string, any>, seq: number): void {
    this.structure.apply(kind, data, seq)
    const message = defaultProjection(kind, data)
    if (message !== undefined) this.history.addOne(seq, message)
    // A step's chunks share pages: close its page, so the pending parts do not outlive the step.
    if (kind === Kind.StepEnd) this.pack?.seal()
  }

  /**
   * Commits a fresh session's own `session/meta` at seq 0: the one event
   * that opens every log, admitted here, at creation, instead of through
   * `admit` (whose structure check and apply then never meet seq 0 or the
   * meta on a live log's path). The data is validated and frozen as
   * `admit` would; nothing is published (the session is private).
   */
  admitMeta(data: SessionEventMap['session/meta'], time: number): void {
    const json = this.home.json
    const problem = json.problem(data)
    if (problem) {
      const path = formatPath('data', problem.path)
      throw new SessionError('INVALID_EVENT', `session/meta ${path} ${problem.reason}`, { type: 'session/meta', seq: 0, path })
    }
    const shape = shapeProblem(Kind.Meta, data)
    if (shape) throw new SessionError('INVALID_EVENT', `session/meta: ${shape}`, { type: 'session/meta', seq: 0, path: shape.slice(0, shape.indexOf(' ')) })
    json.freezeChecked()
    this.slots.put(0, newEnvelope(META, 0, time, data))
    this.length = 1
    this.structure.openLog(data.seedLength)
  }

  /**
   * The `assistant/chunk` fast path: the data was recognized field by field
   * (`chunkDataShape`), so it is lossless JSON of a valid shape and only the
   * structure is left to check; then the chunk (and a usage or reason object)
   * and the data are frozen directly. Errors are those of the generic path.
   */
  private admitChunk(data: ChunkData, shape: Shape, seq: number, time: number, loaded: Record<string, unknown> | undefined): AnySessionEvent {
    this.structure.checkChunk(data.turn, data.step, seq)
    freezeChunk(data.chunk, shape)
    Object.freeze(data)
    const event =
      loaded === undefined
        ? (Object.freeze(new Envelope(CHUNK, seq, time, data)) as unknown as AnySessionEvent)
        : this.envelope(CHUNK, seq, time, data, false, loaded)
    // Commit.
    this.slots.put(seq, event)
    this.length = seq + 1
    if (loaded === undefined || envelopeIsPlain(loaded)) {
      const n = this.unpackedCount++
      this.unpacked[n] = event
      this.unpackedShapes[n] = shape
    }
    return event
  }

  /** The frozen log entry: the loaded envelope itself when it can be adopted, else a new one. */
  private envelope(type: string, seq: number, time: number, data: object, ignorable: boolean, loaded: Record<string, unknown> | undefined): AnySessionEvent {
    if (loaded !== undefined && (loaded.ignorable === true) === ignorable) {
      if (!Object.isFrozen(loaded)) {
        loaded.type = type
        Object.freeze(loaded)
      }
      return loaded as unknown as AnySessionEvent
    }
    return (ignorable ? Object.freeze({ type, seq, time, data, ignorable: true as const }) : newEnvelope(type, seq, time, data)) as AnySessionEvent
  }

  /**
   * A packed chunk of a loaded log (`LoadedLog`), replayed: of step `step` of
   * turn `turn`, its entry already in the adopted `slots`. Its structure is
   * checked and its entry committed.
   */
  admitPacked(turn: number, step: number, seq: number): void {
    this.structure.checkChunk(turn, step, seq)
    this.length = seq + 1
  }

  /**
   * Takes `slots`, the entries of a loaded log whose chunks are packed in
   * `pack`, as this (empty) session's own storage, to be replayed entry by
   * entry: `length` grows as they are committed, so a projector still sees
   * only the log before its event. The session packs its own chunks into the
   * same `pack` from then on.
   */
  adopt(slots: SlotList, pack: ChunkPack): void {
    this.slots = slots
    this.pack = pack
  }

  /**
   * Packs the chunks committed since the last call: each slot then holds the
   * packed index instead of the event. Called only when no publication is
   * running, so every listener has received each chunk as the object it was
   * committed as (an invariant checker compares `events[seq]` with what it
   * receives), and the objects can die young instead of being kept until
   * their step closes.
   */
  packChunks(): void {
    const count = this.unpackedCount
    if (count === 0) return
    const events = this.unpacked
    const shapes = this.unpackedShapes
    const pack = (this.pack ??= new ChunkPack())
    // Nothing below calls out, so the lists cannot grow meanwhile; they are reused (by count, not by length),
    // each entry dropped once read, so that a packed chunk's objects can die young.
    for (let i = 0; i < count; i++) {
      const event = events[i] as SessionEvent<'assistant/chunk'>
      events[i] = EVENT_SAMPLE
      const data = event.data
      const index = pack.add(data.turn, data.step, event.time, data.chunk, shapes[i]!)
      if (index >= 0) this.slots.packAt(event.seq, index)
    }
    this.unpackedCount = 0
  }

  private project(registered: RegisteredType, event: AnySessionEvent): SessionProjection | undefined {
    let projection: SessionProjection | undefined | void
    this.projecting = true
    try {
      projection = registered.projector!(event, this)
    } catch (error) {
      throw new SessionError('PROJECTION_FAILED', `the projector of ${event.type} threw: ${error instanceof Error ? error.message : String(error)}`, {
        type: event.type,
        seq: event.seq,
        cause: error,
      })
    } finally {
      this.projecting = false
    }
    if (projection === undefined || projection === null) return undefined
    const problem = projectionProblem(this.home.json, projection, event.seq)
    if (problem) {
      throw new SessionError('PROJECTION_FAILED', `the projector of ${event.type} returned an invalid projection: ${problem}`, {
        type: event.type,
        seq: event.seq,
      })
    }
    this.home.json.freezeChecked()
    return projection
  }

  /**
   * Publishes a committed event. A listener that appends re-enters here; its
   * event is queued and published once the current one has reached every
   * listener, so listeners always see events in seq order.
   */
  private publish(event: AnySessionEvent): void {
    if (this.publishing) {
      this.backlog.push(event)
      return
    }
    this.publishing = true
    try {
      this.dispatch.emit(event)
      for (let i = 0; i < this.backlog.length; i++) this.dispatch.emit(this.backlog[i]!)
    } catch (error) {
      this.onListenerError(error)
    } finally {
      if (this.backlog.length) this.backlog.length = 0
      this.publishing = false
    }
  }
}

/** What an append from inside a projector gets (made apart: the appends that never meet it carry no copy of it). */
function reentrant(id: SessionId, type: string, seq: number): SessionError {
  return new SessionError('REENTRANT_APPEND', `a projector of session "${id}" tried to append ${type}: projectors must not append`, { type, seq })
}

type ChunkData = { turn: number; step: number; chunk: Record<string, unknown> }

const CHUNK = BUILT_IN_TYPES[Kind.AssistantChunk]
const META = BUILT_IN_TYPES[Kind.Meta]

/** How many chunks may wait for packing before the lists grow (a publication's re-entrant appends). */
const UNPACKED_CAPACITY = 64
/** An object standing for an event, only to give a new list the elements kind of objects. */
const EVENT_SAMPLE = Object.freeze({}) as unknown as AnySessionEvent
