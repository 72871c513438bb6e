export type {} from './events'
import { AgentRegistry } from './service'

export default AgentRegistry
export { AgentRegistry }
export { AgentError } from './errors'
export type { AgentErrorCode, AgentErrorCodeMap } from './errors'
export { admitInput, resolveAgentInput } from './input'
export { initiator, withInitiator } from './initiator'
export { agentEvents } from './notifications'
export type { AgentEventEmitter, AgentNotification } from './notifications'
export type * from './types'
