import type { LlmErrorCode } from '@deepseek-ai/dsh-llm'

/**
 * The codes retried by default, and how many consecutive times per turn.
 *
 * `TIMEOUT` is retried once: a provider that sent nothing within its deadline
 * is usually down, and each attempt costs the whole deadline (with
 * dsh-llm-openai's 30 s header deadline, a dead server fails the turn in about
 * a minute instead of several). `MALFORMED_STREAM`, `AUTH`, `BAD_REQUEST`,
 * `CONTEXT_OVERFLOW`, `INVALID_CONFIG` and the rest are not retried: the same
 * request would fail the same way.
 */
export const DEFAULT_BUDGETS: Readonly<Partial<Record<LlmErrorCode, number>>> = Object.freeze({
  RATE_LIMIT: 5,
  SERVER: 3,
  TIMEOUT: 1,
  TRANSPORT: 3,
  EMPTY_RESPONSE: 2,
})
