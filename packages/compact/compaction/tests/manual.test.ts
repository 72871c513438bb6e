import type { Agent } from '@deepseek-ai/dsh-agent'
import { trace } from '@deepseek-ai/dsh-testkit'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { CompactionError, type CompactionResult } from '../src'
import { chars, compactionEvents, harness, texts, turn, type Harness } from './helpers'

const WINDOW = { window: 10_000, maxOutput: 2_000, config: { auto: false } }
const answer = () => ({ text: chars(1_000, 'a'), usage: false as const })

/** Three 2,000-token turns. */
async function threeTurns(h: Harness): Promise<Agent> {
  const agent = await h.agent()
  for (let i = 0; i < 3; i++) await turn(agent, chars(1_000, 'p'))
  return agent
}

describe('compact() and status() (R-CMP-8)', () => {
  it('compacts an idle agent at once, with its instructions, and reports the result', async () => {
    const h = await harness({ ...WINDOW, respond: answer })
    const agent = await threeTurns(h)
    expect(h.root.compaction.status(agent)).toEqual({ estimatedTokens: 6_000, threshold: 0.8, compactions: 0, running: false, window: 10_000, usableWindow: 8_000, share: 0.6, limit: 6_400 })
    const result = await h.root.compaction.compact(agent, { instructions: '  Keep the API names.  ' })
    const summary = compactionEvents(agent.session)[1]!
    expect(result).toEqual({ kind: 'summary', reason: 'manual', seq: summary.seq, from: 5, to: (compactionEvents(agent.session)[0]!.data as { to: number }).to, tokensBefore: 6_000, tokensAfter: (summary.data as { tokensAfter: number }).tokensAfter })
    expect(h.summaryRequests[0]!.messages[0]!.content[0]).toMatchObject({ text: expect.stringMatching(/Additional instructions for this summary:\nKeep the API names\.\n\nWrite the summary now\.$/) })
    expect(h.root.compaction.status(agent)).toMatchObject({ compactions: 1, last: { kind: 'summary', reason: 'manual', seq: summary.seq }, running: false })
    expect(h.root.compaction.status(agent).estimatedTokens).toBe(result.kind === 'skipped' ? -1 : result.tokensAfter)
    await h.expectClean()
  })

  it('waits for the open turn when the agent is busy (as maintenance), and no turn opens meanwhile', async () => {
    const h = await harness({ ...WINDOW, respond: answer })
    const agent = await threeTurns(h)
    const held = h.model.control()
    agent.followup('a long task')
    await held.started
    const compaction = h.root.compaction.compact(agent)
    agent.followup('queued meanwhile')
    await held.release()
    await compaction
    await agent.whenIdle()
    expect(trace(agent.session).filter((line) => /^(turn\/|compaction\/)/.test(line)).slice(-6)).toEqual([
      'turn/start 4 prompt',
      'turn/end 4 completed',
      'compaction/start',
      'compaction/summary',
      'turn/start 5 prompt',
      'turn/end 5 completed',
    ])
    await h.expectClean()
  })

  it("called from inside the agent's own turn (a tool), it runs at that turn's next step", async () => {
    const results: CompactionResult[] = []
    let root: Harness['root'] | undefined
    const compactTool = defineTool({
      name: 'compact_context',
      description: 'Compacts the conversation.',
      parameters: z.object({}),
      execute: (_args, run) => {
        void root!.compaction.compact(run.agent, { instructions: 'Keep the plan.' }).then((result) => results.push(result))
        return 'scheduled'
      },
    })
    let calls = 0
    const h = await harness({
      ...WINDOW,
      tools: [compactTool],
      respond: () => (++calls === 4 ? { toolCalls: [{ id: 'k1', name: 'compact_context' }], usage: false } : answer()),
    })
    root = h.root
    const agent = await threeTurns(h)
    await turn(agent, 'compact yourself')
    expect(trace(agent.session).filter((line) => !line.startsWith('assistant/')).slice(-8)).toEqual([
      'tool/call compact_context',
      'tool/result ok "scheduled"',
      'step/end 4.1',
      'compaction/start',
      'compaction/summary',
      'step/start 4.2',
      'step/end 4.2',
      'turn/end 4 completed',
    ])
    expect(results).toMatchObject([{ kind: 'summary', reason: 'manual' }])
    expect(compactionEvents(agent.session)[0]!.data).toMatchObject({ reason: 'manual', turn: 4, step: 2, instructions: 'Keep the plan.' })
    await h.expectClean()
  })

  it('skips, writing nothing, when everything is in the protected tail', async () => {
    const h = await harness({ ...WINDOW, respond: () => ({ text: 'short', usage: false }) })
    const agent = await h.agent()
    await turn(agent, 'hello')
    expect(await h.root.compaction.compact(agent)).toEqual({
      kind: 'skipped',
      reason: 'manual',
      code: 'NOTHING_TO_COMPACT',
      why: 'nothing to compact: the history after the last summary (about 10 tokens) is all within the protected tail (2,000 tokens)',
    })
    expect(compactionEvents(agent.session)).toEqual([])
  })

  it('a summary that comes out no smaller than the range: a skip (not an error), the start closed with its usage, nothing shadowed, the agent goes on', async () => {
    const h = await harness({ ...WINDOW, respond: answer, summary: () => ({ text: chars(8_000, 's'), usage: { inputTokens: 3_000, outputTokens: 2_000 } }) })
    const agent = await threeTurns(h)
    const before = agent.session.deriveMessages()
    const result = await h.root.compaction.compact(agent)
    const events = compactionEvents(agent.session)
    expect(result).toEqual({
      kind: 'skipped',
      reason: 'manual',
      code: 'NOT_SMALLER',
      why: expect.stringMatching(/^nothing to gain: the summary \(about [\d,]+ tokens with what it keeps verbatim\) would not be smaller than the [\d,]+ tokens it replaces; nothing was compacted$/),
      seq: events[1]!.seq,
    })
    expect(events.map((event) => [event.type, event.data])).toEqual([
      ['compaction/start', expect.objectContaining({ reason: 'manual' })],
      ['compaction/failed', { code: 'NOT_SMALLER', message: (result as { why: string }).why, usage: { inputTokens: 3_000, outputTokens: 2_000 }, calls: 1, route: { provider: 'scripted', model: 'test-model' } }],
    ])
    expect(agent.session.deriveMessages()).toEqual(before)
    expect(h.root.compaction.status(agent)).toMatchObject({ compactions: 0, running: false })
    expect(h.root.compaction.status(agent)).not.toHaveProperty('last')
    await turn(agent, 'next')
    expect(agent.status).toBe('idle')
    expect(texts(h.agentRequests.at(-1)!.messages).at(-1)).toBe('user: next')
    expect(trace(agent.session).at(-1)).toBe('turn/end 4 completed')
    await h.expectClean()
  })

  it("announces agent/session-start('compact'); what a listener injects then is seen after the replacement", async () => {
    const h = await harness({ ...WINDOW, respond: answer })
    const sources: string[] = []
    h.root.on('agent/session-start', (agent, source) => {
      sources.push(source)
      if (source === 'compact') agent.inject('Reminder: the project uses tabs.')
    })
    const agent = await threeTurns(h)
    await h.root.compaction.compact(agent)
    await turn(agent, 'next')
    expect(sources).toEqual(['startup', 'compact'])
    const sent = texts(h.agentRequests.at(-1)!.messages)
    expect(sent[0]).toMatch(/^user: This conversation was compacted/)
    expect(sent.slice(-2)).toEqual(['user: Reminder: the project uses tabs.', 'user: next'])
    await h.expectClean()
  })

  it("knows the window before the first request of an agent that names no model (the app's default model), and skips an empty history", async () => {
    const h = await harness({ ...WINDOW, respond: answer, defaultModel: { provider: 'scripted', model: 'test-model' } })
    const agent = await h.agent()
    expect(agent.options).not.toHaveProperty('model')
    expect(await h.root.compaction.compact(agent)).toEqual({ kind: 'skipped', reason: 'manual', code: 'NOTHING_TO_COMPACT', why: 'nothing to compact: the history is empty' })
    expect(h.root.compaction.status(agent)).toEqual({ estimatedTokens: 0, threshold: 0.8, compactions: 0, running: false, window: 10_000, usableWindow: 8_000, share: 0, limit: 6_400 })
    expect(compactionEvents(agent.session)).toEqual([])
  })

  it('refuses what is not an agent, and instructions that are not text', async () => {
    const h = await harness()
    await expect(h.root.compaction.compact({} as Agent)).rejects.toEqual(new CompactionError('INVALID_ARGUMENT', 'compact() needs an agent (from ctx.agents)'))
    const agent = await h.agent()
    await expect(h.root.compaction.compact(agent, { instructions: 42 as unknown as string })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
  })
})
