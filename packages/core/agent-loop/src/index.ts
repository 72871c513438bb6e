import { AgentLoop } from './service'

export default AgentLoop
export { AgentLoop }
export { AgentLoopConfig } from './config'
export type { ConfigAgent, Durability } from './config'
export { REQUEST_SEPARATOR } from './placement'
export { ABORTED_BEFORE_DISPATCH_TEXT } from './tool-batch'
