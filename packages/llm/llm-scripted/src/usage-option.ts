import type { TokenUsage } from '@deepseek-ai/dsh-llm'
import { ScriptError } from './script'

/**
 * What a call reports as its usage when its reply gives none: `true`, an
 * estimate from the request's and the reply's sizes; `false`, no usage chunk;
 * a `TokenUsage`, that usage on every call (a copy each time), the way a
 * provider's server reports a count the client does not compute.
 */
export type UsageOption = boolean | TokenUsage

const counts = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const
const required = new Set<string>(['inputTokens', 'outputTokens'])

/**
 * `usage` checked: a boolean as is, a `TokenUsage` copied and frozen (later
 * changes to the caller's object change nothing). Throws `INVALID_SCRIPT`
 * naming the bad field: every count must be a non-negative integer,
 * `inputTokens` and `outputTokens` are required, no other field is allowed.
 */
export function checkUsageOption(usage: unknown): boolean | Readonly<TokenUsage> {
  if (typeof usage === 'boolean') return usage
  const expected = 'usage must be true (an estimate), false (none) or a TokenUsage { inputTokens, outputTokens, cacheReadTokens?, cacheWriteTokens?, reasoningTokens? }'
  if (usage === null || typeof usage !== 'object' || Array.isArray(usage)) throw new ScriptError('INVALID_SCRIPT', `${expected} (got ${usage === null ? 'null' : Array.isArray(usage) ? 'an array' : typeof usage})`)
  const given = usage as Record<string, unknown>
  for (const key of Object.keys(given)) {
    if (!(counts as readonly string[]).includes(key)) throw new ScriptError('INVALID_SCRIPT', `${expected}: unknown field "${key}"`)
  }
  const copy: Record<string, number> = {}
  for (const key of counts) {
    const value = given[key]
    if (value === undefined) {
      if (required.has(key)) throw new ScriptError('INVALID_SCRIPT', `${expected}: usage.${key} is missing`)
      continue
    }
    if (!(Number.isSafeInteger(value) && (value as number) >= 0)) {
      throw new ScriptError('INVALID_SCRIPT', `${expected}: usage.${key} must be a non-negative integer (got ${JSON.stringify(value) ?? String(value)})`)
    }
    copy[key] = value as number
  }
  return Object.freeze(copy as unknown as TokenUsage)
}
