import { describe, expect, it } from 'vitest'
import { retryAfterMs, toTokenUsage } from '../src'

describe('toTokenUsage: provider usage to non-overlapping counts', () => {
  it('DeepSeek: hit and miss split the prompt, reasoning comes out of the completion', () => {
    expect(
      toTokenUsage({
        prompt_tokens: 1000,
        completion_tokens: 120,
        total_tokens: 1120,
        prompt_tokens_details: { cached_tokens: 640 },
        completion_tokens_details: { reasoning_tokens: 100 },
        prompt_cache_hit_tokens: 640,
        prompt_cache_miss_tokens: 360,
      }),
    ).toEqual({ inputTokens: 360, outputTokens: 20, cacheReadTokens: 640, reasoningTokens: 100 })
  })

  it('OpenAI: cached tokens come out of the prompt', () => {
    expect(
      toTokenUsage({
        prompt_tokens: 2006,
        completion_tokens: 300,
        total_tokens: 2306,
        prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      }),
    ).toEqual({ inputTokens: 86, outputTokens: 300, cacheReadTokens: 1920, reasoningTokens: 0 })
  })

  it('a server that reports no cache or reasoning details leaves those fields out', () => {
    expect(toTokenUsage({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })).toEqual({ inputTokens: 12, outputTokens: 7 })
  })

  it('ignores objects without token counts and clamps inconsistent ones at zero', () => {
    expect([toTokenUsage(null), toTokenUsage({}), toTokenUsage({ prompt_tokens: 'many' })]).toEqual([undefined, undefined, undefined])
    expect(
      toTokenUsage({ prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 15 }, completion_tokens_details: { reasoning_tokens: 9 } }),
    ).toEqual({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 15, reasoningTokens: 9 })
  })
})

describe('retryAfterMs', () => {
  const now = Date.parse('2026-11-30T06:00:00Z')
  const hint = (headers: Record<string, string>) => retryAfterMs(new Headers(headers), now)

  it('reads milliseconds, seconds and HTTP dates, in that order of preference', () => {
    expect([
      hint({ 'retry-after-ms': '250.5' }),
      hint({ 'retry-after': '1.5' }),
      hint({ 'retry-after': 'Mon, 30 Nov 2026 06:01:00 GMT' }),
      hint({ 'retry-after-ms': '100', 'retry-after': '7' }),
    ]).toEqual([251, 1500, 60_000, 100])
  })

  it('a date in the past is 0; garbage or no header is no hint', () => {
    expect([hint({ 'retry-after': 'Sun, 29 Nov 2026 06:00:00 GMT' }), hint({ 'retry-after': 'soon' }), hint({})]).toEqual([0, undefined, undefined])
  })
})
