import './events'

export { AgentError } from './errors'
export type { AgentErrorCode, AgentErrorCodeMap } from './errors'
export type * from './types'
