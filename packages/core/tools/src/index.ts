export type {} from './events'
export type {} from './approval'
import { ToolRegistry } from './service'

export { ToolRegistry }
export { DEFAULT_TOOL_TIMEOUT_MS } from './service'
export { defineTool } from './define-tool'
export { TOOL_EFFECTS, effectOf } from './effect'
export type { ToolEffect } from './effect'
export type { DefineToolOptions, ZodObjectSchema } from './define-tool'
export { ToolError, isToolError } from './errors'
export type { ToolErrorCode, ToolErrorCodeMap } from './errors'
export { MAX_FEEDBACK_CHARS, approvalAnswer } from './approval'
export type { ApprovalAnswer, ApprovalRequest, ApprovalResponse, ApprovalScope, ToolApproval } from './approval'
export { isTextResult } from './pipeline'
export type { ToolCallPlan, ToolCallStage } from './pipeline'
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
