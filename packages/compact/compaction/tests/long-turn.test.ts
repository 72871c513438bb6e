import type { LlmRequest } from '@deepseek-ai/dsh-llm'
import { trace } from '@deepseek-ai/dsh-testkit'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { charEstimator, chars, compactionEvents, harness, turn } from './helpers'

const STEPS = 200
const PROMPT = 'Go through the 200 records one by one with the step tool and tell me when you are done. Keep the original order.'

describe('a prompt followed by 200 tool steps (R-CMP-2, R-CMP-4)', () => {
  it('compacts between the steps of the one turn, inside it, and the turn goes on to its end', { timeout: 60_000 }, async () => {
    let executed = 0
    const step = defineTool({
      name: 'step',
      description: 'Processes the next record.',
      parameters: z.object({ i: z.number() }),
      execute: ({ i }) => {
        executed++
        return `record ${i}: ${chars(300, 'r')}`
      },
    })
    // Window 4,000, answer reserve 500: the limit is 80% of 3,500 = 2,800 tokens; one step adds about 320.
    const h = await harness({
      window: 4_000,
      maxOutput: 500,
      tools: [step],
      respond: () => (executed < STEPS ? { toolCalls: [{ id: `s${executed + 1}`, name: 'step', arguments: { i: executed + 1 } }], usage: false } : { text: 'All 200 records are done.', usage: false }),
    })
    const agent = await h.agent()
    await turn(agent, PROMPT)

    // One turn, 201 steps, every tool call ran, and it completed.
    const lines = trace(agent.session)
    expect(lines.filter((line) => line.startsWith('turn/'))).toEqual(['turn/start 1 prompt', 'turn/end 1 completed'])
    expect(lines.filter((line) => line.startsWith('step/start'))).toHaveLength(STEPS + 1)
    expect(executed).toBe(STEPS)
    expect(h.agentRequests.at(-1)!.messages.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'tool-result', toolCallId: 's200' }] })

    // Many compactions, all on pressure, all between two steps of turn 1: right after a step ended
    // and before the next one started, never inside a tool batch.
    const starts = compactionEvents(agent.session).filter((event) => event.type === 'compaction/start')
    expect(starts.length).toBeGreaterThan(5)
    for (const start of starts) expect(start.data).toMatchObject({ reason: 'pressure', turn: 1 })
    const outline = lines.filter((line) => /^(step\/|compaction\/)/.test(line))
    outline.forEach((line, i) => {
      if (line !== 'compaction/start') return
      expect([outline[i - 1], outline[i + 2]]).toEqual([expect.stringMatching(/^step\/end 1\.\d+$/), expect.stringMatching(/^step\/start 1\.\d+$/)])
      expect(outline[i + 1]).toMatch(/^compaction\/(summary|prune)$/)
    })

    // Every request stayed under the usable window, kept the system prompt, paired every tool call
    // with its result, and (after the first summary) still carried the person's prompt verbatim.
    const system = h.agentRequests[0]!.system
    const size = (request: LlmRequest) => request.messages.reduce((total, message) => total + charEstimator.message(message), 0)
    let summarized = false
    for (const request of h.agentRequests) {
      expect(size(request)).toBeLessThanOrEqual(3_500)
      expect(request.system).toBe(system)
      const calls = request.messages.flatMap((message) => message.content.flatMap((block) => (block.type === 'tool-call' ? [block.id] : [])))
      const results = request.messages.flatMap((message) => message.content.flatMap((block) => (block.type === 'tool-result' ? [block.toolCallId] : [])))
      expect(results).toEqual(calls)
      const first = request.messages[0]!.content[0]
      summarized ||= first?.type === 'text' && first.text.startsWith('This conversation was compacted')
      const texts = request.messages.flatMap((message) => message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])))
      if (summarized) expect(texts.some((text) => text.includes(`[1]\n${PROMPT}`))).toBe(true)
      else expect(texts[0]).toBe(PROMPT)
    }
    expect(summarized).toBe(true)

    // Between two compactions every request extends the previous one (R-CMP-6): the prefix changes
    // exactly once per compaction.
    let breaks = 0
    h.agentRequests.forEach((request, i) => {
      if (i === 0) return
      const previous = h.agentRequests[i - 1]!.messages
      if (JSON.stringify(request.messages.slice(0, previous.length)) !== JSON.stringify(previous)) breaks++
    })
    expect(breaks).toBe(starts.length)
    await h.expectClean()
  })
})
