import { deferred, settle, trace } from '@deepseek-ai/dsh-testkit'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { CompactionError, type CompactionResult } from '../src'
import { chars, compactionEvents, harness, turn, type Harness } from './helpers'

describe('compact() called from inside a turn that never reaches another step', () => {
  it('settles when the agent is disposed first: rejected ABORTED, nothing compacted', async () => {
    let root: Harness['root'] | undefined
    let scheduled: Promise<CompactionResult> | undefined
    const entered = deferred()
    const release = deferred()
    const compactTool = defineTool({
      name: 'compact_context',
      description: 'Compacts the conversation.',
      parameters: z.object({}),
      execute: async (_args, run) => {
        scheduled = root!.compaction.compact(run.agent)
        entered.resolve()
        await release.promise
        return 'scheduled'
      },
    })
    let calls = 0
    const h = await harness({
      window: 10_000,
      maxOutput: 2_000,
      config: { auto: false },
      tools: [compactTool],
      respond: () => (++calls === 4 ? { toolCalls: [{ id: 'k1', name: 'compact_context' }], usage: false } : { text: chars(1_000, 'a'), usage: false }),
    })
    root = h.root
    const agent = await h.agent()
    for (let i = 0; i < 3; i++) await turn(agent, chars(1_000, 'p'))

    // The tool schedules a compaction for the next step; the person cancels the turn meanwhile, then quits.
    agent.followup('compact yourself')
    await entered.promise
    agent.cancel({ kind: 'user' })
    release.resolve()
    await agent.whenIdle()
    expect(trace(agent.session).at(-1)).toBe('turn/end 4 aborted')
    let outcome: unknown = 'pending'
    scheduled!.then(
      (result) => void (outcome = result),
      (error: unknown) => void (outcome = error),
    )
    await h.handles[0]!.dispose()
    await settle()
    expect(outcome).toBeInstanceOf(CompactionError)
    expect(outcome).toMatchObject({ code: 'ABORTED' })
    expect(compactionEvents(agent.session)).toEqual([])
  })
})
