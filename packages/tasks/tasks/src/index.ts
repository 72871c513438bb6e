export type {} from './events'
import { Tasks } from './service'

export default Tasks
export { Tasks }
export { TasksConfig } from './config'
export { TasksError } from './errors'
export type { TasksErrorCode, TasksErrorCodeMap } from './errors'
export type { TaskDeliveryRoute } from './events'
export { TASKS_SOURCE } from './delivery'
export { TaskStoppedError } from './task'
export { bounded, outcomeNotice } from './notice'
export type { NoticeFacts } from './notice'
export type {
  TaskControl,
  TaskEndEvent,
  TaskEnding,
  TaskEvent,
  TaskHandle,
  TaskProgressEvent,
  TaskResult,
  TaskSpec,
  TaskStatus,
  TaskStopCause,
} from './types'
