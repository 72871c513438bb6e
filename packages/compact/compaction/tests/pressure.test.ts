import { trace } from '@deepseek-ai/dsh-testkit'
import { describe, expect, it } from 'vitest'
import { chars, compactionEvents, harness, texts, turn } from './helpers'

// Window 10,000, output limit 2,000: usable 8,000, limit 0.8 × 8,000 = 6,400 tokens. With the
// one-token-per-character estimator and no usage reported, the estimate is the sum of
// the history's characters.

describe('pressure (R-CMP-2)', () => {
  it('compacts at the next step once the estimate passes the threshold, and not before', async () => {
    const answers = [chars(1_000, 'a'), chars(1_000, 'b'), chars(1_000, 'c'), chars(1_000, 'd'), 'e']
    const h = await harness({ window: 10_000, maxOutput: 2_000, respond: (_request, call) => ({ text: answers[call]!, usage: false }) })
    const agent = await h.agent()
    const estimates: number[] = []

    for (const prompt of [chars(1_000, '1'), chars(1_000, '2'), chars(1_000, '3'), chars(400, '4')]) {
      await turn(agent, prompt)
      estimates.push(h.root.compaction.status(agent).estimatedTokens)
    }
    // 2,000, 4,000, 6,000, then 7,400: over 6,400 only after turn 4; turn 4's own request (6,400) was exactly at the limit.
    expect(estimates).toEqual([2_000, 4_000, 6_000, 7_400])
    expect(compactionEvents(agent.session)).toEqual([])
    expect(h.root.compaction.status(agent)).toMatchObject({ window: 10_000, usableWindow: 8_000, limit: 6_400, share: 0.74, pending: 'pressure', compactions: 0, running: false })
    expect(h.summaryRequests).toHaveLength(0)

    await turn(agent, 'go on')
    const events = compactionEvents(agent.session)
    expect(events.map((event) => event.type)).toEqual(['compaction/start', 'compaction/summary'])
    const start = events[0]!.data as Record<string, unknown>
    expect(start).toMatchObject({ reason: 'pressure', estimatedTokens: 7_400, window: 10_000, turn: 5, step: 1 })
    expect(start.why).toBe(
      'after turn 4 step 1 the next request is estimated at 7,400 tokens, over the limit of 6,400 (80% of the usable window: 10,000 − 2,000 reserved for the answer)',
    )
    // The compaction ran at turn 5's pre-step, before its step opened; the turn went on.
    expect(trace(agent.session).slice(-9)).toEqual([
      'turn/start 5 prompt',
      'compaction/start',
      'compaction/summary',
      'step/start 5.1',
      'user/message "go on"',
      'assistant/chunk ×2',
      'assistant/message "e" stop',
      'step/end 5.1',
      'turn/end 5 completed',
    ])
    // The protected tail (2,000 tokens: turn 4, 1,400) stayed verbatim after the summary.
    expect(texts(h.agentRequests.at(-1)!.messages).slice(1)).toEqual([`user: ${chars(400, '4')}`, `assistant: ${chars(1_000, 'd')}`, 'user: go on'])
    expect(h.root.compaction.status(agent)).toMatchObject({ compactions: 1, last: { kind: 'summary', reason: 'pressure' } })
    await h.expectClean()
  })

  it('a provider that reports no input tokens (zeros, or the output only) does not make the estimate collapse', async () => {
    // Gateways that send `usage: { prompt_tokens: 0, completion_tokens: 0 }` or only `completion_tokens` (the
    // adapters map a missing count to 0): such a report says nothing about the request's size.
    const answers = [chars(1_000, 'a'), chars(1_000, 'b'), chars(1_000, 'c'), chars(1_000, 'd'), 'e']
    const usages = [{ inputTokens: 0, outputTokens: 0 }, { inputTokens: 0, outputTokens: 1_000 }]
    const h = await harness({ window: 10_000, maxOutput: 2_000, respond: (_request, call) => ({ text: answers[call]!, usage: usages[call % 2]! }) })
    const agent = await h.agent()
    const estimates: number[] = []
    for (const prompt of [chars(1_000, '1'), chars(1_000, '2'), chars(1_000, '3'), chars(400, '4')]) {
      await turn(agent, prompt)
      estimates.push(h.root.compaction.status(agent).estimatedTokens)
    }
    // As without any report: the sum of the history's characters.
    expect(estimates).toEqual([2_000, 4_000, 6_000, 7_400])
    await turn(agent, 'go on')
    expect(compactionEvents(agent.session).map((event) => event.type)).toEqual(['compaction/start', 'compaction/summary'])
    await h.expectClean()
  })

  it("takes the window, the answer's reserve and the threshold from the config over the adapter's", async () => {
    const h = await harness({ window: 10_000, maxOutput: 2_000, config: { window: 5_000, reservedOutputTokens: 1_000, threshold: 0.5 }, respond: () => ({ text: 'ok', usage: false }) })
    const agent = await h.agent()
    await turn(agent, chars(1_900))
    expect(h.root.compaction.status(agent)).toEqual({ estimatedTokens: 1_902, threshold: 0.5, compactions: 0, running: false, window: 5_000, usableWindow: 4_000, share: 1_902 / 5_000, limit: 2_000 })
    // The next prompt takes the request over 2,000: compacted at its pre-step, with the configured figures.
    await turn(agent, chars(200))
    expect(compactionEvents(agent.session)[0]!.data).toMatchObject({
      reason: 'pressure',
      window: 5_000,
      why: 'before turn 2 step 1 with the 1 proposed message the next request is estimated at 2,102 tokens, over the limit of 2,000 (50% of the usable window: 5,000 − 1,000 reserved for the answer)',
    })
  })

  it('uses the usage the provider reports for the last request, calibrates the estimator with it, and adds what was appended since', async () => {
    const h = await harness({
      window: 10_000,
      maxOutput: 2_000,
      respond: (_request, call) =>
        call === 0 ? { text: 'ok', usage: { inputTokens: 3_500, outputTokens: 300, cacheReadTokens: 500, cacheWriteTokens: 100 } } : { text: 'fine', usage: false },
    })
    const agent = await h.agent()
    await turn(agent, chars(3_000))
    // 3,500 + 500 + 100 + 300 reported; nothing appended since.
    expect(h.root.compaction.status(agent).estimatedTokens).toBe(4_400)
    // The provider counted 4,100 input tokens where the estimator said 3,000: later estimates are scaled by 4,100 / 3,000.
    await turn(agent, chars(1_000))
    expect(h.root.compaction.status(agent).estimatedTokens).toBe(4_400 + Math.ceil((4_100 / 3_000) * 1_004))
    expect(compactionEvents(agent.session)).toEqual([])
    // The next prompt passes the limit: caught at its pre-step, before its request leaves.
    await turn(agent, chars(500))
    expect(compactionEvents(agent.session).map((event) => event.type)).toEqual(['compaction/start', 'compaction/summary'])
    expect((compactionEvents(agent.session)[0]!.data as { why: string }).why).toBe(
      'before turn 3 step 1 with the 1 proposed message the next request is estimated at 6,457 tokens, over the limit of 6,400 (80% of the usable window: 10,000 − 2,000 reserved for the answer)',
    )
    await h.expectClean()
  })
})
