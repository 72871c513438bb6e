export type {} from './events'
import { SessionStore } from './service'

export default SessionStore
export { SessionStore }
export type { PrepareOptions } from './prepare-options'
export type { SessionEntry } from './session-entry'
export { SESSION_FORMAT_VERSION, SessionId } from './types'
export { BUILT_IN_TYPES } from './built-in-types'
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
export { appendBuilt, appendChecked } from './append-built'
export { observeSessions } from './observers'
export type { SessionObserveOptions, SessionObserver } from './observers'
export { SessionError } from './errors'
export { ReadOnlyHistoryError } from './log/history-snapshot'
export type { SessionErrorCode, SessionErrorCodeMap, SessionErrorDetails } from './errors'
export type { SessionProjection, SessionProjector } from './projection'
export type { EventTypeInfo, EventTypeOptions } from './event-types'
export { INTERRUPTED_RESULT_TEXT, repairSession } from './repair'
export type { SessionRepairPlan } from './repair'
export { LoadedLog } from './log/loaded-log'
export { MemorySessionPersistence } from './memory-persistence'
export { memoryPersistence } from './memory-persistence-plugin'
export type { MemoryPersistenceConfig } from './memory-persistence-plugin'
export type {
  LoadedSession,
  PersistedSessionInfo,
  SessionLoadOptions,
  SessionLoadWarning,
  SessionPersistence,
  SessionRepair,
} from './persistence'
export { WriteBehind } from './backend/write-behind'
export type { WriteBehindOptions, WriteBehindQueue, WriteBehindStorage } from './backend/write-behind'
export { LiveSessions } from './backend/live-sessions'
export type { LiveSessionBackend, LiveWriter } from './backend/live-sessions'
export { persistLiveSessions } from './backend/persist-live-sessions'
export { teardownTakesTheSessions } from './backend/app-teardown'
export { loadRepaired } from './backend/load-repaired'
export { serializeEvent } from './backend/event-line'
export { jsonDataProblem } from './log/lossless-json'
export type { LoadRepairedOptions, RepairingLoad } from './backend/load-repaired'
