import { AgentSpine } from './spine'

export default AgentSpine
export { AgentSpine, SPINE_PACKAGES, SpineConfig } from './spine'
export { Workspace } from './workspace'
export {
  MAX_LIST_ENTRIES,
  MAX_READ_BYTES,
  MAX_SEARCH_MATCHES,
  WorkspaceTools,
  WorkspaceToolsConfig,
  workspaceTools,
} from './workspace-tools'
export type { WorkspaceToolSet } from './workspace-tools'
