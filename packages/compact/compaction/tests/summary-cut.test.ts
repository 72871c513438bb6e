import { trace } from '@deepseek-ai/dsh-testkit'
import { describe, expect, it } from 'vitest'
import { CompactionError } from '../src'
import { chars, compactionEvents, harness, turn } from './helpers'

describe('a summary the model cut at its token limit (R-CMP-7)', () => {
  it('is not written: the compaction fails saying why, and the history stays whole', async () => {
    // A reasoning model spends the call's maxTokens thinking, or a long session's notes run past it: the answer
    // stops mid-way, before the open work and the latest request the prompt asks for last.
    const h = await harness({
      window: 10_000,
      maxOutput: 2_000,
      config: { auto: false },
      respond: () => ({ text: chars(1_000, 'a'), usage: false }),
      summary: () => ({ text: 'Goal: port the parser.\nDecisions: keep the AST.\nFiles and code: src/par', finish: 'max-tokens', usage: { inputTokens: 4_000, outputTokens: 1_000 } }),
    })
    const agent = await h.agent()
    for (let i = 0; i < 3; i++) await turn(agent, chars(1_000, 'p'))
    const history = agent.session.deriveMessages()

    const error = await h.root.compaction.compact(agent).catch((reason: unknown) => reason)
    expect(error).toBeInstanceOf(CompactionError)
    expect(error).toMatchObject({
      code: 'SUMMARY_FAILED',
      message: 'the summary call to scripted/test-model stopped at its token limit (1,000 tokens) before the summary was complete; nothing was compacted. Raise summaryMaxTokens (a reasoning model spends part of it thinking)',
    })
    expect(compactionEvents(agent.session).map((event) => [event.type, (event.data as { code?: string }).code])).toEqual([
      ['compaction/start', undefined],
      ['compaction/failed', 'SUMMARY_FAILED'],
    ])
    expect(agent.session.deriveMessages()).toEqual(history)
    await turn(agent, 'go on')
    expect(trace(agent.session).at(-1)).toBe('turn/end 4 completed')
    await h.expectClean()
  })
})
