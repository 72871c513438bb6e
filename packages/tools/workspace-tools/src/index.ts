export type {} from './errors'
import { WorkspaceTools } from './service'

export default WorkspaceTools
export { WorkspaceTools }
export { DEFAULT_LIMITS, DEFAULT_SHELL, WORKSPACE_TOOL_NAMES, WorkspaceToolsConfig } from './config'
export type { SandboxMode, ShellConfig, WorkspaceLimits, WorkspaceToolName, WorkspaceToolsOptions } from './config'
export { SandboxUnavailableError } from './sandbox'
export type { SandboxStatus } from './sandbox'
export { MAX_NAME_BYTES, MAX_PATH_BYTES, WorkspaceRootError } from './workspace'
