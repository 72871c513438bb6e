import type { TokenUsage } from '@deepseek-ai/dsh-llm'

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined
}

/**
 * Maps a chat-completions `usage` object to the non-overlapping `TokenUsage`.
 *
 * Providers report overlapping totals: `prompt_tokens` includes cached prompt
 * tokens, `completion_tokens` includes reasoning tokens. Cache hits come from
 * DeepSeek's `prompt_cache_hit_tokens` (its `prompt_cache_miss_tokens` is then
 * the uncached rest) or OpenAI's `prompt_tokens_details.cached_tokens`;
 * reasoning from `completion_tokens_details.reasoning_tokens`. The overlap is
 * subtracted, so `inputTokens` is the uncached prompt and `outputTokens` the
 * visible answer. `cacheReadTokens` / `reasoningTokens` are present exactly
 * when the provider reported them (a reported 0 stays 0: "no cache hit" is
 * worth knowing). Returns `undefined` when the object has no token counts.
 */
export function toTokenUsage(raw: unknown): TokenUsage | undefined {
  if (raw === null || typeof raw !== 'object') return undefined
  const usage = raw as Record<string, unknown>
  const prompt = count(usage.prompt_tokens)
  const completion = count(usage.completion_tokens)
  if (prompt === undefined && completion === undefined) return undefined
  const promptDetails = (usage.prompt_tokens_details ?? {}) as Record<string, unknown>
  const completionDetails = (usage.completion_tokens_details ?? {}) as Record<string, unknown>

  const hit = count(usage.prompt_cache_hit_tokens)
  const miss = count(usage.prompt_cache_miss_tokens)
  const cached = hit ?? count(promptDetails?.cached_tokens)
  const reasoning = count(completionDetails?.reasoning_tokens)

  const inputTokens =
    hit !== undefined && miss !== undefined ? miss : Math.max(0, (prompt ?? 0) - (cached ?? 0))
  const result: TokenUsage = {
    inputTokens,
    outputTokens: Math.max(0, (completion ?? 0) - (reasoning ?? 0)),
  }
  if (cached !== undefined) result.cacheReadTokens = cached
  if (reasoning !== undefined) result.reasoningTokens = reasoning
  return result
}
