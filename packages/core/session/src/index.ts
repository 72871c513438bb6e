export { SessionId } from './types'
export type {
  AnySessionEvent,
  ContextRecord,
  InboxRecord,
  PromptEnvelope,
  SessionEvent,
  SessionEventMap,
  SessionEventType,
  SessionMetaInput,
  Todo,
  TurnEndReason,
  TurnEndReasonMap,
  TurnTrigger,
  TurnTriggerMap,
} from './types'
export type { Session, SessionPosition } from './session'
export type { LoadedSession, PersistedSessionInfo, SessionPersistence, SessionRepair } from './persistence'
