import type { Message } from '@deepseek-ai/dsh-llm'
import { describe, expect, it } from 'vitest'
import { truncateMiddle, truncateStart } from '../src/replacement'
import { compactionEvents, harness, turn } from './helpers'

/** A lone half of a surrogate pair: JSON.stringify writes it as `\ud83d`, which strict provider parsers refuse. */
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

describe('cut texts never split a character (a lone surrogate makes every later request invalid JSON)', () => {
  it('the kept user message and the conclusion in a summary stay well-formed', async () => {
    // Budgets of 500 tokens (one per character here); both texts are about 3,000.
    const h = await harness({
      window: 10_000,
      maxOutput: 2_000,
      config: { auto: false, userMessagesShare: 0.05, conclusionShare: 0.05, tailShare: 0.05 },
      respond: (_request, call) => ({ text: call === 1 ? `${'😀'.repeat(1_500)}.` : 'ok', usage: false }),
    })
    const agent = await h.agent()
    await turn(agent, 'first')
    await turn(agent, `x${'😀'.repeat(1_500)}`)
    await turn(agent, 'z'.repeat(400))
    const result = await h.root.compaction.compact(agent)
    expect(result.kind).toBe('summary')
    const summary = compactionEvents(agent.session).find((event) => event.type === 'compaction/summary')!
    const data = summary.data as { messages: readonly Message[]; userMessages: { kept: readonly string[] } }
    expect(data.userMessages.kept.filter((text) => LONE.test(text))).toEqual([])
    const first = data.messages[0]!.content[0]!
    const replacement = first.type === 'text' ? first.text : ''
    expect(replacement).toContain('## Your last conclusion before the compaction')
    expect(LONE.test(replacement)).toBe(false)
    // What the next request sends is well-formed too.
    await turn(agent, 'go on')
    const blocks = h.agentRequests.at(-1)!.messages.flatMap((message) => message.content)
    expect(blocks.filter((block) => block.type === 'text' && LONE.test(block.text))).toEqual([])
    await h.expectClean()
  })

  it('truncateMiddle and truncateStart keep whole characters for every budget', () => {
    const count = (text: string) => text.length
    for (const text of [`x${'😀'.repeat(300)}`, `${'😀'.repeat(300)}.`, '😀'.repeat(300)]) {
      for (let budget = 1; budget < text.length; budget++) {
        expect(LONE.test(truncateMiddle(text, budget, count))).toBe(false)
        expect(LONE.test(truncateStart(text, budget, count))).toBe(false)
      }
    }
  })
})
