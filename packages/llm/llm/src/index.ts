// Vocabulary
export type {
  ContentBlock,
  ContentBlockMap,
  ContentBlockType,
  ImageBlock,
  MessageSource,
  MessageSourceKind,
  MessageSourceMap,
  ReasoningBlock,
  RedactedReasoningBlock,
  TextBlock,
  ToolCallBlock,
  ToolResultBlock,
} from './content'
export { text } from './content'
export { CallId, MessageId, newCallId, newMessageId } from './ids'
export { deepFreeze } from './json'
export type { JsonObject, JsonSchema, JsonValue } from './json'
export {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textOf,
  toolCallsOf,
} from './message'
export type { AssistantMessage, CreateMessageOptions, Message, UserMessage } from './message'
export type { FinishReason, FinishReasonKind, FinishReasonMap, StreamChunk, StreamChunkType, TokenUsage } from './stream'
export { LlmError, isLlmErrorCode, toLlmFailure } from './failure'
export type { LlmErrorCode, LlmErrorCodeMap, LlmFailure } from './failure'
export type {
  GenerateOptions,
  LlmAdapter,
  LlmCallConfig,
  LlmRequest,
  ModelInfo,
  PreparedCall,
  RetryPolicy,
  StreamRequest,
  ToolSchema,
} from './adapter'
export type { SessionId } from './session-id'
export { HISTORY, historyOf } from './history'
export { contentProblem, isContent } from './validate'
export { ContentRedactor, REDACTED, Secrets, redactUserinfo } from './redact'
export type { ContentChunk } from './redact'

// The service
export { LlmService } from './service'
export { LlmService as default } from './service'
export type { LlmStreamCall } from './events'
export { assemble, createAssembler } from './assembler'
export type { AssembledResponse, Assembler } from './assembler'
export { forgetLoopRequests, isLoopRequest, loopRequests, markLoopRequest } from './loop-requests'
export type { LoopRequestEntry, LoopRequestMeta } from './loop-requests'
export { isFromRoute } from './route'
