import { AgentSpine } from './spine'

export default AgentSpine
export { AgentSpine, SPINE_PACKAGES, SpineConfig } from './spine'
