import type { CallId } from './ids'

/**
 * The content block variants, keyed by their `type` tag. A plugin adds a
 * variant by declaration merging:
 *
 * ```ts
 * declare module '@deepseek-ai/dsh-llm' {
 *   interface ContentBlockMap { citation: { type: 'citation'; url: string } }
 * }
 * ```
 *
 * Adapters map the variants they know and must refuse (with a `BAD_REQUEST`
 * failure) or drop, documenting which, the ones they do not.
 */
export interface ContentBlockMap {
  text: { type: 'text'; text: string }
  /** Model reasoning. `signature` is opaque provider state, replayed only to the same provider/model route. */
  reasoning: { type: 'reasoning'; text: string; signature?: string }
  /**
   * Reasoning the provider encrypted before sending it (Anthropic's
   * `redacted_thinking`): `data` is opaque provider state, kept in the log so
   * that it can be sent back. Like a `signature`, it is replayed only to the
   * provider/model route that produced it; an adapter for any other route
   * drops the block (it carries nothing a person or another model can read)
   * instead of refusing the request.
   */
  'redacted-reasoning': { type: 'redacted-reasoning'; data: string }
  /** An image, base64-encoded. */
  image: { type: 'image'; mediaType: string; data: string }
  /** A call the model made. `arguments` is the raw JSON text exactly as streamed. */
  'tool-call': { type: 'tool-call'; id: CallId; name: string; arguments: string }
  /** The result of one tool call, carried by a user-role message. */
  'tool-result': { type: 'tool-result'; toolCallId: CallId; content: readonly ContentBlock[]; isError?: boolean }
}

export type ContentBlockType = keyof ContentBlockMap
export type ContentBlock = ContentBlockMap[ContentBlockType]
export type TextBlock = ContentBlockMap['text']
export type ReasoningBlock = ContentBlockMap['reasoning']
export type RedactedReasoningBlock = ContentBlockMap['redacted-reasoning']
export type ImageBlock = ContentBlockMap['image']
export type ToolCallBlock = ContentBlockMap['tool-call']
export type ToolResultBlock = ContentBlockMap['tool-result']

/**
 * Where a message came from, keyed by `kind`. Extensible by declaration
 * merging like `ContentBlockMap`. The source is model-hidden metadata: adapters
 * never send it.
 */
export interface MessageSourceMap {
  /** A person typed it. */
  user: { kind: 'user' }
  /** A plugin produced it (`plugin` names the plugin, e.g. `'context'` for admitted contexts). */
  plugin: { kind: 'plugin'; plugin: string }
  /** A model produced it. */
  model: { kind: 'model'; provider: string; model: string }
  /** A tool produced it, as the result of call `callId`. */
  tool: { kind: 'tool'; callId: CallId }
}

export type MessageSourceKind = keyof MessageSourceMap
export type MessageSource = MessageSourceMap[MessageSourceKind]

/** A text block. */
export const text = (value: string): TextBlock => ({ type: 'text', text: value })
