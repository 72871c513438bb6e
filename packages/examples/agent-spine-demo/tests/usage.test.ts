import { describe, expect, it } from 'vitest'
import { formatUsage, sumUsage } from '../src/cli/usage'

describe('the turn usage line', () => {
  it('sums the non-overlapping counts of every call: prompt = uncached + cache reads + cache writes', () => {
    const usage = sumUsage([
      { inputTokens: 300, outputTokens: 10, cacheReadTokens: 0 },
      undefined,
      { inputTokens: 40, outputTokens: 3, cacheReadTokens: 300, cacheWriteTokens: 12, reasoningTokens: 7 },
    ])
    expect(usage).toEqual({ calls: 2, input: 652, cached: 300, output: 20 })
    expect(formatUsage(usage)).toBe('652 tokens in (cache hits 46%) · 20 out')
  })

  it('says when the provider reported no cache reads, or no usage at all', () => {
    expect(formatUsage(sumUsage([{ inputTokens: 1234, outputTokens: 5 }]))).toBe('1,234 tokens in (cache hits not reported) · 5 out')
    expect(formatUsage(sumUsage([undefined]))).toBe('no token usage reported')
  })
})
