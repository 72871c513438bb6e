import { createAssistantMessage, createToolResultMessage, createUserMessage, CallId, type Message } from '@deepseek-ai/dsh-llm'
import type { Session } from '@deepseek-ai/dsh-session'
import { describe, expect, it } from 'vitest'
import { defaultEstimator, TokenMeter } from '../src'
import { planRange } from '../src/plan'
import { charEstimator, chars, harness } from './helpers'

const model = { kind: 'model' as const, provider: 'p', model: 'm' }

/** Appends one step: the assistant's answer (with `usage`) and, for each call, its tool/call and result. */
function step(session: Session, turn: number, n: number, text: string, results: string[] = [], usage?: { inputTokens: number; outputTokens: number }) {
  session.append('step/start', { turn, step: n })
  const calls = results.map((_, i) => ({ type: 'tool-call' as const, id: CallId(`c${turn}.${n}.${i}`), name: 'cat', arguments: '{}' }))
  const message = createAssistantMessage([...(text ? [{ type: 'text' as const, text }] : []), ...calls], { source: model })
  session.append('assistant/message', { turn, step: n, message, chunkSeqs: [], finishReason: { kind: calls.length ? 'tool-calls' : 'stop' }, ...(usage ? { usage } : {}) })
  results.forEach((result, i) => {
    session.append('tool/call', { turn, step: n, callId: calls[i]!.id, name: 'cat', arguments: '{}' })
    session.append('tool/result', { turn, step: n, message: createToolResultMessage({ callId: calls[i]!.id, content: result }) })
  })
  session.append('step/end', { turn, step: n })
}

describe('TokenMeter (R-CMP-1)', () => {
  it('keeps the derived history, with positions and sizes, through appends and shadows', async () => {
    const h = await harness()
    const session = h.root.sessions.create('m')
    const meter = new TokenMeter(session, charEstimator)
    session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('user/message', { message: createUserMessage(chars(100)) })
    session.append('step/end', { turn: 1, step: 1 })
    step(session, 1, 2, 'thinking', [chars(300, 'r')])
    step(session, 1, 3, chars(50, 'a'))
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    meter.update()
    expect(meter.entries.map((entry) => [entry.pos, entry.tokens])).toEqual([
      [3, 100],
      [6, 8 + 2],
      [8, 300],
      [11, 50],
    ])
    expect(meter.entries.map((entry) => entry.message)).toEqual([...session.deriveMessages()])
    expect(meter.boundaries).toEqual([1, 2, 5, 10])
    expect(meter.estimate()).toBe(460)

    // A prune then a summary: the replica shadows as the session does.
    const stub = createToolResultMessage({ callId: CallId('c1.2.0'), content: 'stub' })
    session.append('compaction/prune', { from: 8, to: 9, at: 14, messages: [stub], pruned: [], tokensBefore: 460, tokensAfter: 164 })
    meter.update()
    expect(meter.entries.map((entry) => entry.message)).toEqual([...session.deriveMessages()])
    expect(meter.estimate()).toBe(164)
    const summary = createUserMessage('S', { source: { kind: 'plugin', plugin: 'compaction' } })
    const kept = { kept: ['x'], omitted: 0, omittedTokens: 0 }
    session.append('compaction/summary', {
      from: 3, to: 10, at: 15, summary: 'S', messages: [summary], userMessages: kept,
      usage: { inputTokens: 1, outputTokens: 1 }, calls: 1, route: { provider: 'p', model: 'm' }, tokensBefore: 164, tokensAfter: 51,
    })
    meter.update()
    expect(meter.entries).toEqual([
      { message: summary, pos: 3, tokens: 1, kept },
      { message: session.deriveMessages()[1], pos: 11, tokens: 50 },
    ])
    expect(meter.entries.map((entry) => entry.message)).toEqual([...session.deriveMessages()])
    // Boundaries at or before the first message can never be cuts again.
    expect(meter.boundaries).toEqual([5, 10])
    expect(meter.compactions).toBe(2)
    expect(meter.last).toEqual({ kind: 'summary', reason: 'pressure', seq: 15, tokensBefore: 164, tokensAfter: 51 })
  })

  it('estimates from the last reported usage plus what was appended since, calibrated (1× to 8×), and recounts with a new estimator', async () => {
    const h = await harness()
    const session = h.root.sessions.create('u')
    const meter = new TokenMeter(session, { ...charEstimator, header: (system) => system.length })
    session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('user/message', { message: createUserMessage(chars(1_000)) })
    session.append('request/header', { provider: 'p', model: 'm', system: chars(200, 's'), tools: [], reason: 'initial' })
    session.append('step/end', { turn: 1, step: 1 })
    meter.update()
    expect(meter.estimate()).toBe(1_200)
    // The provider counted 1,800 where the estimator said 1,200: 1.5 reported tokens per estimated one.
    step(session, 1, 2, chars(100, 'a'), [chars(200, 'r')], { inputTokens: 1_800, outputTokens: 100 })
    meter.update()
    expect(meter.calibration).toBe(1.5)
    expect(meter.estimate()).toBe(1_900 + Math.ceil(1.5 * 200))
    expect(meter.estimateWith([createUserMessage(chars(10))])).toBe(1_900 + 300 + 15)
    // An absurd report is capped at 8×.
    step(session, 1, 3, 'b', [], { inputTokens: 100_000, outputTokens: 1 })
    meter.update()
    expect(meter.calibration).toBe(8)
    // A smaller report never brings it under 1.
    step(session, 1, 4, 'c', [], { inputTokens: 10, outputTokens: 1 })
    meter.update()
    expect(meter.calibration).toBe(1)

    meter.setEstimator(defaultEstimator)
    expect(meter.headerTokens).toBe(50)
    expect(meter.historyTokens).toBe(meter.entries.reduce((sum, entry) => sum + defaultEstimator.message(entry.message), 0))
  })
})

describe('TokenMeter after a compaction', () => {
  it('keeps the last reported usage as its baseline and counts the shadow as one more change', async () => {
    const h = await harness()
    const session = h.root.sessions.create('s')
    const meter = new TokenMeter(session, charEstimator)
    session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('user/message', { message: createUserMessage(chars(1_000)) })
    session.append('step/end', { turn: 1, step: 1 })
    step(session, 1, 2, 'ok', [], { inputTokens: 1_200, outputTokens: 100 })
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    meter.update()
    expect([meter.calibration, meter.estimate()]).toEqual([1.2, 1_300])
    // The prompt (1,000) gives way to a one-character summary: 1,300 + 1.2 × (1 − 1,000).
    const predicted = meter.estimateAfter(1 - 1_000)
    session.append('compaction/summary', {
      from: 3, to: 5, at: 9, summary: 'S', messages: [createUserMessage('S', { source: { kind: 'plugin', plugin: 'compaction' } })],
      userMessages: { kept: [], omitted: 0, omittedTokens: 0 }, usage: { inputTokens: 1, outputTokens: 1 }, calls: 1,
      route: { provider: 'p', model: 'm' }, tokensBefore: 1_300, tokensAfter: 102,
    })
    meter.update()
    expect([meter.estimate(), predicted]).toEqual([1_300 + Math.ceil(1.2 * (1 - 1_000)), 1_300 + Math.ceil(1.2 * (1 - 1_000))])
    expect(meter.historyTokens).toBe(1 + 2)
  })
})

describe('planRange (R-CMP-4: the protected tail)', () => {
  /** Entries of the given sizes at the given positions. */
  const entries = (...specs: [number, number][]) => specs.map(([pos, tokens]) => ({ message: {} as Message, pos, tokens }))

  it('keeps the newest steps within the budget and cuts at a step boundary, inside a turn if need be', () => {
    // turn/start 1, step/start 2: prompt at 3 (100); step/start 5: call at 6 (10), result at 7 (300); step/start 9: answer at 10 (50).
    const list = entries([3, 100], [6, 10], [7, 300], [10, 50])
    expect(planRange(list, [1, 2, 5, 9], 12, 60)).toEqual({ from: 3, to: 9, count: 3, fresh: 3, rangeTokens: 410, tailTokens: 50 })
    // The tool step fits too: the cut moves before it, never between the call and its result.
    expect(planRange(list, [1, 2, 5, 9], 12, 360)).toEqual({ from: 3, to: 5, count: 1, fresh: 1, rangeTokens: 100, tailTokens: 360 })
    // The newest step alone is over the budget: the tail is empty.
    expect(planRange(list, [1, 2, 5, 9], 12, 40)).toEqual({ from: 3, to: 12, count: 4, fresh: 4, rangeTokens: 460, tailTokens: 0 })
    // Everything fits: nothing to compact.
    expect(planRange(list, [1, 2, 5, 9], 12, 460)).toBeUndefined()
    expect(planRange([], [1], 2, 10)).toBeUndefined()
  })
})
