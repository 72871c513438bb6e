export type {} from './events'
import { Subagents } from './service'

export default Subagents
export { Subagents }
export { SubagentsConfig } from './config'
export type { AgentTypeConfig } from './config'
export { SubagentsError } from './errors'
export type { SubagentsErrorCode, SubagentsErrorCodeMap } from './errors'
export { InProcessProvider, SUBAGENTS_SOURCE } from './in-process-provider'
export type { PermissionsLink } from './in-process-provider'
export { SUBAGENT_SECTION, allowListMatcher } from './child-setup'
export { childOutcome, childProgress } from './child-outcome'
export type { ChildProgress } from './child-outcome'
export type {
  AgentType,
  ChildOutcome,
  ProviderHooks,
  SpawnSpec,
  SubagentEndEvent,
  SubagentEvent,
  SubagentProvider,
  SubagentRequest,
  SubagentResult,
  SubagentRun,
  SubagentStatus,
} from './types'
