import './events'
import './approval'
import { ToolRegistry } from './tools'

export { ToolRegistry }
export { defineTool } from './define-tool'
export type { DefineToolOptions, ZodObjectSchema } from './define-tool'
export { ToolError, isToolError } from './errors'
export type { ToolErrorCode, ToolErrorCodeMap } from './errors'
export type { ApprovalRequest, ToolApproval } from './approval'
export type { ToolCallPlan } from './pipeline'
export type {
  DeferredContext,
  PostExecuteDecision,
  PreExecuteDecision,
  ToolCall,
  ToolCallResult,
  ToolChange,
  ToolDefinition,
  ToolDispatch,
  ToolExecuteOptions,
  ToolGuard,
  ToolGuardVerdict,
  ToolInvocation,
  ToolOutput,
  ToolRunContext,
} from './types'

export default ToolRegistry
