import { trace } from '@deepseek-ai/dsh-testkit'
import { describe, expect, it } from 'vitest'
import { chars, compactionEvents, harness, texts, turn } from './helpers'

// Window 1,000, output limit 200: usable 800, limit 0.8 × 800 = 640 tokens. With the
// one-token-per-character estimator and no usage reported, the estimate is the sum of
// the history's characters.

describe('pressure (R-CMP-2)', () => {
  it('compacts at the next step once the estimate passes the threshold, and not before', async () => {
    const answers = [chars(100, 'a'), chars(100, 'b'), chars(100, 'c'), chars(100, 'd'), 'e']
    const h = await harness({ respond: (_request, call) => ({ text: answers[call]!, usage: false }) })
    const agent = await h.agent()
    const estimates: number[] = []

    for (const prompt of [chars(100, '1'), chars(100, '2'), chars(100, '3'), chars(40, '4')]) {
      await turn(agent, prompt)
      estimates.push(h.root.compaction.status(agent).estimatedTokens)
    }
    // 200, 400, 600, then 740: over 640 only after turn 4; turn 4's own request (640) was exactly at the limit.
    expect(estimates).toEqual([200, 400, 600, 740])
    expect(compactionEvents(agent.session)).toEqual([])
    expect(h.root.compaction.status(agent)).toMatchObject({ window: 1_000, usableWindow: 800, limit: 640, pending: 'pressure', compactions: 0, running: false })
    expect(h.summaryRequests).toHaveLength(0)

    await turn(agent, 'go on')
    const events = compactionEvents(agent.session)
    expect(events.map((event) => event.type)).toEqual(['compaction/start', 'compaction/summary'])
    const start = events[0]!.data as Record<string, unknown>
    expect(start).toMatchObject({ reason: 'pressure', estimatedTokens: 740, window: 1_000, turn: 5, step: 1 })
    expect(start.why).toBe(
      'after turn 4 step 1 the next request is estimated at 740 tokens, over the limit of 640 (80% of the usable window: 1,000 − 200 reserved for the answer)',
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
    // The protected tail (200 tokens: turn 4, 140) stayed verbatim after the summary.
    expect(texts(h.agentRequests.at(-1)!.messages).slice(1)).toEqual([`user: ${chars(40, '4')}`, `assistant: ${chars(100, 'd')}`, 'user: go on'])
    expect(h.root.compaction.status(agent)).toMatchObject({ compactions: 1, last: { kind: 'summary', reason: 'pressure' } })
    await h.expectClean()
  })

  it('uses the usage the provider reports for the last request, plus an estimate of what was appended since', async () => {
    const h = await harness({
      respond: (_request, call) => (call === 0 ? { text: 'ok', usage: { inputTokens: 500, outputTokens: 20, cacheReadTokens: 100, cacheWriteTokens: 10 } } : { text: 'fine', usage: false }),
    })
    const agent = await h.agent()
    await turn(agent, 'hello')
    // 500 + 100 + 10 + 20 reported; nothing appended since. (The request was too small to calibrate the estimator.)
    expect(h.root.compaction.status(agent).estimatedTokens).toBe(630)
    expect(compactionEvents(agent.session)).toEqual([])
    // A 6-character prompt and its answer ("fine") bring it exactly to the limit (640): no compaction.
    await turn(agent, chars(6))
    expect(h.root.compaction.status(agent).estimatedTokens).toBe(640)
    expect(compactionEvents(agent.session)).toEqual([])
    // The next prompt passes it: caught at its pre-step, before its request leaves.
    await turn(agent, chars(20))
    expect(compactionEvents(agent.session).map((event) => event.type)).toEqual(['compaction/start', 'compaction/summary'])
    expect((compactionEvents(agent.session)[0]!.data as { why: string }).why).toMatch(/^before turn 3 step 1 with the 1 proposed message the next request is estimated at 660 tokens/)
    await h.expectClean()
  })
})
