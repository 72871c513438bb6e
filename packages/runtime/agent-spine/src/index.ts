import { AgentSpine } from './plugin'

export default AgentSpine
export { AgentSpine, SPINE_PACKAGES } from './plugin'
export { SpineConfig } from './config'
