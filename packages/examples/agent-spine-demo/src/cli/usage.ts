import type { TokenUsage } from '@deepseek-ai/dsh-llm'

/** The token usage of one turn, summed over its model calls. */
export interface TurnUsage {
  /** Model calls that reported usage. */
  calls: number
  /** Prompt tokens: uncached + cache reads + cache writes (the counts do not overlap). */
  input: number
  /** Prompt tokens served from the provider's cache; `undefined` when no call reported cache reads. */
  cached: number | undefined
  /** Completion tokens: visible output + reasoning. */
  output: number
}

/** Sums the `usage` of a turn's `assistant/message` events (calls without usage are skipped). */
export function sumUsage(usages: readonly (TokenUsage | undefined)[]): TurnUsage {
  const total: TurnUsage = { calls: 0, input: 0, cached: undefined, output: 0 }
  for (const usage of usages) {
    if (!usage) continue
    total.calls++
    total.input += usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0)
    total.output += usage.outputTokens + (usage.reasoningTokens ?? 0)
    if (usage.cacheReadTokens !== undefined) total.cached = (total.cached ?? 0) + usage.cacheReadTokens
  }
  return total
}

/** `1,234 tokens in (cache hits 56%) · 78 out`, or a note that the provider reported no usage. */
export function formatUsage(usage: TurnUsage): string {
  if (usage.calls === 0) return 'no token usage reported'
  const cache =
    usage.cached === undefined
      ? 'cache hits not reported'
      : `cache hits ${usage.input === 0 ? 0 : Math.round((usage.cached / usage.input) * 100)}%`
  return `${count(usage.input)} tokens in (${cache}) · ${count(usage.output)} out`
}

function count(n: number): string {
  return n.toLocaleString('en-US')
}
