import { trace } from '@deepseek-ai/dsh-testkit'
import type { ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import { describe, expect, it } from 'vitest'
import { CompactionError } from '../src'
import { chars, compactionEvents, harness, isSummaryRequest, turn, type HarnessOptions } from './helpers'

/** Four turns (7,400 tokens) on a 10,000-token window (limit 6,400): a compaction is pending for the next step. */
async function pressured(options: HarnessOptions = {}) {
  const h = await harness({ window: 10_000, maxOutput: 2_000, respond: () => ({ text: chars(1_000, 'a'), usage: false }), ...options })
  const agent = await h.agent()
  for (const size of [1_000, 1_000, 1_000, 400]) await turn(agent, chars(size, 'p'))
  expect(h.root.compaction.status(agent).pending).toBe(options.config?.auto === false ? undefined : 'pressure')
  return { h, agent }
}

describe('cancel and failure (R-CMP-7)', () => {
  it('cancelling the agent during the summary call aborts it and shadows nothing', async () => {
    const { h, agent } = await pressured()
    const history = JSON.stringify(agent.session.deriveMessages())
    const held = h.model.control()
    agent.followup('go on')
    const request = await held.started
    expect(isSummaryRequest(request)).toBe(true)
    agent.cancel({ kind: 'user' })
    await held.aborted
    await agent.whenIdle()

    expect(trace(agent.session).slice(-4)).toEqual(['turn/start 5 prompt', 'compaction/start', 'compaction/failed', 'turn/end 5 aborted'])
    expect(compactionEvents(agent.session).at(-1)!.data).toEqual({
      code: 'ABORTED',
      message: 'the summary call to scripted/test-model was aborted; nothing was compacted',
    })
    expect(JSON.stringify(agent.session.deriveMessages())).toBe(history)
    expect(h.root.compaction.status(agent)).toMatchObject({ compactions: 0, running: false })

    // The next turn compacts (the pressure is measured again at its first step).
    await turn(agent, 'again')
    expect(compactionEvents(agent.session).map((event) => event.type).slice(-2)).toEqual(['compaction/start', 'compaction/summary'])
    await h.expectClean()
  })

  it("a manual compaction stops when its caller's signal aborts, and shadows nothing", async () => {
    const { h, agent } = await pressured({ config: { auto: false } })
    const history = JSON.stringify(agent.session.deriveMessages())
    const controller = new AbortController()
    const held = h.model.control()
    const running = h.root.compaction.compact(agent, { signal: controller.signal })
    await held.started
    expect(h.root.compaction.status(agent).running).toBe(true)
    controller.abort()
    await expect(running).rejects.toMatchObject({ name: 'CompactionError', code: 'ABORTED' })
    expect(trace(agent.session).slice(-2)).toEqual(['compaction/start', 'compaction/failed'])
    expect(JSON.stringify(agent.session.deriveMessages())).toBe(history)
    await h.expectClean()
  })

  it('disposing the agent during a manual compaction aborts it', async () => {
    const { h, agent } = await pressured({ config: { auto: false } })
    const held = h.model.control()
    const running = h.root.compaction.compact(agent)
    await held.started
    await h.handles[0]!.dispose()
    const error = await running.catch((reason: unknown) => reason)
    expect(error).toBeInstanceOf(CompactionError)
    expect(error).toMatchObject({ code: 'ABORTED' })
    expect(agent.session.events.filter((event) => event.type.startsWith('compaction/')).map((event) => event.type)).toEqual(['compaction/start', 'compaction/failed'])
  })

  it('a failed summary loses nothing: the turn goes on with the whole history, and the next turn tries again', async () => {
    let fail = true
    const { h, agent } = await pressured({
      summary: (): ScriptReply => (fail ? { error: { code: 'SERVER', message: 'overloaded' } } : { text: 'Recovered summary.', usage: false }),
    })
    const history = agent.session.deriveMessages()
    await turn(agent, 'go on')
    expect(trace(agent.session).filter((line) => line.startsWith('compaction/') || line.startsWith('turn/end'))).toEqual([
      'turn/end 1 completed',
      'turn/end 2 completed',
      'turn/end 3 completed',
      'turn/end 4 completed',
      'compaction/start',
      'compaction/failed',
      'turn/end 5 completed',
    ])
    expect((compactionEvents(agent.session).at(-1)!.data as { code: string }).code).toBe('SUMMARY_FAILED')
    // Turn 5's request carried the whole history, then the prompt.
    expect(h.agentRequests.at(-1)!.messages.slice(0, history.length)).toEqual([...history])
    fail = false
    await turn(agent, 'and now')
    expect(compactionEvents(agent.session).slice(-2).map((event) => event.type)).toEqual(['compaction/start', 'compaction/summary'])
    await h.expectClean()
  })
})
