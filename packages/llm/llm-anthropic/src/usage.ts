import type { TokenUsage } from '@deepseek-ai/dsh-llm'

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined

/** The raw counts of a Messages API `usage` object that the adapter reads; a field absent (or `null`) was not reported. */
export interface RawUsage {
  input_tokens?: number
  output_tokens?: number
  cache_read_input_tokens?: number
  cache_creation_input_tokens?: number
}

const fields = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const

/**
 * Folds a `usage` object into the counts known so far: every field it
 * reports replaces the one before (`message_start` gives the input side,
 * each `message_delta` the cumulative output and, on newer servers, the
 * input side again). Returns whether it reported anything.
 */
export function foldUsage(into: RawUsage, raw: unknown): boolean {
  if (raw === null || typeof raw !== 'object') return false
  let reported = false
  for (const field of fields) {
    const value = count((raw as Record<string, unknown>)[field])
    if (value === undefined) continue
    into[field] = value
    reported = true
  }
  return reported
}

/**
 * Maps the Messages API counts to `TokenUsage`. They already do not overlap:
 * `input_tokens` is the uncached part of the prompt, beside the tokens read
 * from the cache (`cacheReadTokens`) and those written to it
 * (`cacheWriteTokens`); `output_tokens` counts the whole answer, thinking
 * included (the API does not report thinking apart, so `reasoningTokens` is
 * never set). The cache fields are present exactly when the provider reported
 * them (a reported 0 stays 0).
 */
export function toTokenUsage(raw: RawUsage): TokenUsage {
  const usage: TokenUsage = { inputTokens: raw.input_tokens ?? 0, outputTokens: raw.output_tokens ?? 0 }
  if (raw.cache_read_input_tokens !== undefined) usage.cacheReadTokens = raw.cache_read_input_tokens
  if (raw.cache_creation_input_tokens !== undefined) usage.cacheWriteTokens = raw.cache_creation_input_tokens
  return usage
}
