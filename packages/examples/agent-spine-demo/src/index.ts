// The spine bundle lives in @deepseek-ai/dsh-agent-spine; it is re-exported here so that
// imports from this package written before the move keep working.
import { AgentSpine } from '@deepseek-ai/dsh-agent-spine'

export default AgentSpine
export { AgentSpine, SPINE_PACKAGES, SpineConfig } from '@deepseek-ai/dsh-agent-spine'
