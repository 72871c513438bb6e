import type { CallId } from './ids'
import type { LlmFailure } from './failure'

/**
 * Token counts of one model call. The counts do not overlap: `inputTokens`
 * excludes cache reads and writes, and `outputTokens` excludes reasoning, so
 * the total is the sum of every field.
 */
export interface TokenUsage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
  reasoningTokens?: number
}

/** Why a model call ended, keyed by `kind`. Extensible by declaration merging. */
export interface FinishReasonMap {
  /** The model finished its answer. */
  stop: { kind: 'stop' }
  /** The model stopped to have its tool calls run. */
  'tool-calls': { kind: 'tool-calls' }
  /** The answer hit the output token limit. */
  'max-tokens': { kind: 'max-tokens' }
  /** The call was aborted; `failure` says why when it was not the caller's own signal. */
  aborted: { kind: 'aborted'; failure?: LlmFailure }
  /** The call failed. */
  error: { kind: 'error'; failure: LlmFailure }
}

export type FinishReasonKind = keyof FinishReasonMap
export type FinishReason = FinishReasonMap[FinishReasonKind]

/**
 * The adapter → loop streaming protocol (R-LLM-6):
 *
 * - `index` is the content-block index in the assistant message. A block's
 *   kind is set by its first chunk; chunks of different indices may
 *   interleave; blocks are ordered by index.
 * - The first `tool-call-delta` of an index carries `id` and `name`; later ones
 *   may omit or repeat them.
 * - `usage` is a cumulative snapshot: the last one wins.
 * - There is exactly one `finish`, and it is the last chunk. A stream that ends
 *   without `finish` is a failure: `EMPTY_RESPONSE` when it produced no chunk,
 *   `TRANSPORT` otherwise.
 * - Opaque provider state (reasoning `signature`s, `redacted-reasoning`
 *   blocks) is replayed only to the same provider/model route.
 * - A `redacted-reasoning-delta` opens (or extends) a `redacted-reasoning`
 *   block: its `data` pieces concatenate like text. Providers send such a
 *   block whole, so it is usually one chunk; the data is opaque and must
 *   reach the log byte for byte (an adapter never rewrites it).
 *
 * Chunks are small flat JSON objects; the loop logs each one as it arrives.
 */
export type StreamChunk =
  | { type: 'text-delta'; index: number; text: string }
  | { type: 'reasoning-delta'; index: number; text: string; signature?: string }
  | { type: 'tool-call-delta'; index: number; id?: CallId; name?: string; argumentsDelta: string }
  | { type: 'redacted-reasoning-delta'; index: number; data: string }
  | { type: 'usage'; usage: TokenUsage }
  | { type: 'finish'; reason: FinishReason }

export type StreamChunkType = StreamChunk['type']
