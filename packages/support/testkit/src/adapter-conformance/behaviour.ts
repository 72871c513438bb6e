import type { TokenUsage } from '@deepseek-ai/dsh-llm'

/**
 * One thing a provider streams, in provider-neutral terms. A driver turns
 * each into its provider's wire format (an OpenAI `chat.completion.chunk`, an
 * Anthropic `content_block_delta`, a scripted chunk).
 */
export type ProviderEvent =
  | { type: 'reasoning'; text: string }
  | { type: 'text'; text: string }
  /**
   * A fragment of tool call `call` (0-based, numbered in the order the calls
   * begin). The first fragment of a call carries its `id` and `name`; later
   * fragments carry only `arguments` text. Fragments of different calls may
   * interleave.
   */
  | { type: 'tool-call'; call: number; id?: string; name?: string; arguments: string }
  /** A cumulative usage snapshot: everything counted so far. */
  | { type: 'usage'; usage: TokenUsage }

/** How a provider ends an answer it completed. */
export type AnswerFinish = 'stop' | 'tool-calls' | 'max-tokens'

/**
 * The failure classes the suite asks every adapter to produce, each from the
 * provider condition that means it:
 *
 * - `AUTH`: the provider refuses the credentials (HTTP 401).
 * - `RATE_LIMIT`: the provider asks to slow down and to wait `retryAfterMs`
 *   (HTTP 429 with a retry hint); the failure carries `retryAfterMs`.
 * - `SERVER`: the provider has a server error or is overloaded (HTTP 5xx).
 * - `TIMEOUT`: the provider accepts the request and never answers: the
 *   adapter's own deadline must end the call (a driver may arrange an adapter
 *   with a short deadline for this case).
 * - `TRANSPORT`: the connection fails before any answer (refused or reset).
 * - `CONTEXT_OVERFLOW`: the provider refuses the request as too long for the
 *   model's context window.
 * - `BAD_REQUEST`: the provider refuses the request as invalid (another 4xx).
 * - `EMPTY_RESPONSE`: the provider accepts the request and ends its answer
 *   without producing anything.
 * - `MALFORMED_STREAM`: the provider streams two tool calls with the same id
 *   (the behaviour's `events`): an answer whose results could not say which
 *   call they answer.
 */
export type FailureClass =
  | 'AUTH'
  | 'RATE_LIMIT'
  | 'SERVER'
  | 'TIMEOUT'
  | 'TRANSPORT'
  | 'CONTEXT_OVERFLOW'
  | 'BAD_REQUEST'
  | 'EMPTY_RESPONSE'
  | 'MALFORMED_STREAM'

/** Every failure class, in the order the suite runs them. */
export const FAILURE_CLASSES: readonly FailureClass[] = [
  'AUTH',
  'RATE_LIMIT',
  'SERVER',
  'TIMEOUT',
  'TRANSPORT',
  'CONTEXT_OVERFLOW',
  'BAD_REQUEST',
  'EMPTY_RESPONSE',
  'MALFORMED_STREAM',
]

/** What the provider does with the next call. A driver arranges it (`AdapterUnderTest.arrange`). */
export type AdapterBehaviour =
  /** The provider streams `events`, then ends its answer with `finish`. */
  | { kind: 'answer'; events: readonly ProviderEvent[]; finish: AnswerFinish }
  /**
   * The provider fails the call in the way that means `failure` (see
   * `FailureClass`); `retryAfterMs` is the hint of a `RATE_LIMIT`, `events`
   * the duplicate-id tool calls of a `MALFORMED_STREAM`.
   */
  | { kind: 'fail'; failure: FailureClass; retryAfterMs?: number; events?: readonly ProviderEvent[] }
  /**
   * The provider streams `events`, then holds the stream open and sends
   * nothing more until the call ends: the consumer aborts it or stops
   * reading, or the suite calls the arranged call's `cut()`.
   */
  | { kind: 'hold'; events: readonly ProviderEvent[] }
