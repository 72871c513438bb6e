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
export { safeEnd, safeStart } from './text-cut'
export { imageFormat, imageMediaType, imagesLeftOut, pixelSize } from './image-header'
export type { ImageFormat, PixelSize } from './image-header'
export { CallId, MessageId, newCallId, newMessageId } from './ids'
export { deepFreeze } from './json'
export type { JsonObject, JsonSchema, JsonValue } from './json'
export {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  frozenTextContent,
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

// The HTTP exchange every provider adapter shares (deadlines, failure classification, config checks)
export { causeOf, HttpExchange } from './http/exchange'
export type { BodyReadResult, ExchangePhase, HttpDeadlines } from './http/exchange'
export { headerOf, retryAfterMs } from './http/retry-after'
export type { RetryAfterHeaders } from './http/retry-after'
export { classifyHttpFailure, FAILURE_DETAIL_CHARS, failureWith } from './http/http-failure'
export type { FailureDetails, HttpAnswer, HttpFailureContext, HttpFailureDialect, ProviderErrorWords } from './http/http-failure'
export { apiKeyCharacterProblem, codePointLabel, lookUpApiKey, preflightCall } from './http/api-key'
export type { ApiKeyCharacterProblem, ApiKeyLookup, ApiKeySettings, CallPreflight } from './http/api-key'
export { definedFields, HTTP_HEADER_NAME, headerValueProblem, parseBaseUrl } from './http/endpoint'
export type { BaseUrlCheck } from './http/endpoint'
export { modelInfoOf } from './http/model-info'
export { HttpProviderAdapter } from './http/provider-adapter'
export type { HttpAdapterOptions, HttpProviderSettings, ProviderRequest } from './http/provider-adapter'
export type { ModelCapabilities } from './http/model-info'
export {
  abortedFinish,
  errorFinish,
  eventPayload,
  streamErrorPayload,
  jsonRequestBody,
  readEventBody,
  redactedStream,
  SNIPPET_CHARS,
  streamExchange,
  withRequestId,
} from './http/stream-exchange'
export type { EventBodySink, StreamingPost } from './http/stream-exchange'
export { BatchedChunks } from './http/batched-chunks'
export type { ChunkAnswer } from './http/batched-chunks'

// The service
export { LlmService } from './service'
export { LlmService as default } from './service'
export type { LlmStreamCall } from './events'
export { assemble, createAssembler } from './assembler'
export type { AssembledResponse, Assembler } from './assembler'
export { forgetLoopRequests, isLoopRequest, loopRequests, markLoopRequest, watchLoopRequests } from './loop-requests'
export type { LoopRequestEntry, LoopRequestMeta } from './loop-requests'
export { isFromRoute } from './route'
export { isSignalAborted, readsAbortedNatively } from './abort-read'
