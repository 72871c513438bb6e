export type {} from './errors'
export type {} from './events'
import { Mcp } from './service'

export { Mcp }
export { McpConfig } from './config'
export type { McpOptions } from './config'
export { mcpServersOf, readMcpConfigFile } from './config-file'
export { McpError } from './errors'
export type { McpErrorCode, McpErrorCodeMap } from './errors'
export type { McpAppliedChange, McpStateChange, McpToolsChange } from './events'
export { expandVariables } from './expand'
export type { Expansion } from './expand'
export { MAX_TOOL_NAME_CHARS, assignToolNames } from './names'
export type { ToolKey } from './names'
export { REDACTED, Redactor } from './redact'
export { toToolOutput } from './results'
export type { ResultLimits } from './results'
export { resolveServer } from './server-config'
export type { HttpServerConfig, McpServerConfig, ResolvedServer, StdioServerConfig } from './server-config'
export type { McpServerState, McpServerStatus } from './types'

export default Mcp
