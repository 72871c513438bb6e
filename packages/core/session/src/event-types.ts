import { ScopedRegistry } from '@deepseek-ai/dsh-scope'
import { BUILT_IN_TYPES, builtInKind, isBuiltInType } from './built-in-types'
import { SessionError } from './errors'
import type { SessionProjector } from './projection'
import type { SessionEventType } from './types'

/** How a plugin declares an event type it merged into `SessionEventMap`. */
export interface EventTypeOptions<K extends SessionEventType = SessionEventType> {
  /**
   * Events of this type are safe to ignore for a reader that does not know
   * the type. The session marks each such event (`event.ignorable === true`),
   * backends persist the mark, and a later load without the registering plugin
   * accepts the event as log-only instead of refusing the session (R-PER-4).
   * Default `false`: a session holding an unknown, unmarked type refuses to
   * load, because dropping it could change what the model sees.
   */
  ignorable?: boolean
  /** Turns events of this type into messages of the derived history (see `SessionProjector`). */
  projector?: SessionProjector<K>
}

/** What the store knows about one event type. */
export interface EventTypeInfo {
  /** The canonical string for the type (loaders may share it instead of keeping a parsed copy per event). */
  readonly type: string
  /** One of dsh-session's own types. */
  readonly builtIn: boolean
  readonly ignorable: boolean
  /** Whether events of this type produce messages (built in: the four model-visible types). */
  readonly projected: boolean
  /**
   * The projector a plugin registered for this type, so that an independent
   * checker (the agent loop's invariant companion) can replay it; absent for
   * built-in types, whose projection is the documented default.
   */
  readonly projector?: SessionProjector<any>
}

/** A registered (merged) type, as the sessions read it. */
export interface RegisteredType {
  readonly type: string
  readonly ignorable: boolean
  readonly projector: SessionProjector<any> | undefined
}

const projectedBuiltIns = new Set<string>(['user/message', 'steering/message', 'assistant/message', 'tool/result'])
const builtInInfos: readonly EventTypeInfo[] = BUILT_IN_TYPES.map((type) =>
  Object.freeze({ type, builtIn: true, ignorable: false, projected: projectedBuiltIns.has(type) }),
)

/**
 * The types a store accepts beyond the built-in ones. Registrations of one
 * type stack: the newest wins, and removing it uncovers the previous one, so a
 * plugin that is disposed and plugged again leaves exactly its new entry.
 */
export class EventTypes {
  private readonly registry = new ScopedRegistry<RegisteredType>()

  /** Adds a registration; the returned function removes it (idempotent). */
  add(type: string, options: EventTypeOptions<any>): () => void {
    if (typeof type !== 'string' || type.length === 0) {
      throw new SessionError('INVALID_ARGUMENT', 'an event type must be a non-empty string')
    }
    if (isBuiltInType(type)) {
      throw new SessionError('INVALID_ARGUMENT', `${type} is a built-in event type; only types merged by plugins can be registered`, { type })
    }
    if (options.projector !== undefined && typeof options.projector !== 'function') {
      throw new SessionError('INVALID_ARGUMENT', `the projector of ${type} must be a function`, { type })
    }
    return this.registry.add(type, Object.freeze({ type, ignorable: options.ignorable === true, projector: options.projector }))
  }

  /** The registration in force for a merged type, if any. */
  get(type: string): RegisteredType | undefined {
    return this.registry.get(type)
  }

  /** What is known about `type`; built-in answers are shared frozen objects (cheap to ask per loaded line). */
  info(type: string): EventTypeInfo | undefined {
    const kind = builtInKind(type)
    if (kind !== undefined) return builtInInfos[kind]
    const registered = this.registry.get(type)
    if (!registered) return undefined
    const info: EventTypeInfo = { type: registered.type, builtIn: false, ignorable: registered.ignorable, projected: registered.projector !== undefined }
    return registered.projector ? { ...info, projector: registered.projector } : info
  }
}
