import type { ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { stubText } from '../src'
import { chars, compactionEvents, harness, texts, turn } from './helpers'

/** Prints `size` copies of `c`: a file of a known size. */
const cat = defineTool({
  name: 'cat',
  description: 'Prints a file.',
  parameters: z.object({ size: z.number(), c: z.string() }),
  isConcurrencySafe: () => true,
  execute: ({ size, c }) => chars(size, c),
})

/** A tool round: one `cat` call with id `id`, then `answer`. */
function round(id: string, size: number, c: string, answer: string): ScriptReply[] {
  return [
    { toolCalls: [{ id, name: 'cat', arguments: { size, c } }], usage: false },
    { text: answer, usage: false },
  ]
}

describe('pruning (R-CMP-4, tier 1)', () => {
  it('replaces exactly the old large tool results by stubs, model-free, and keeps everything else as it was', async () => {
    const replies = [
      ...round('cA', 2_000, 'A', 'a1'),
      ...round('cB', 100, 'B', 'a2'),
      ...round('cC', 2_000, 'C', 'a3'),
      ...round('cD', 1_500, 'D', 'a4'),
      ...round('cE', 1_000, 'E', 'a5'),
    ]
    const h = await harness({ window: 10_000, maxOutput: 2_000, tools: [cat], config: { pruneMinTokens: 500 }, respond: (_request, call) => replies[call]! })
    const agent = await h.agent()
    for (const prompt of ['p1', 'p2', 'p3', 'p4']) await turn(agent, prompt)
    expect(compactionEvents(agent.session)).toEqual([])
    const before = agent.session.deriveMessages()

    // Turn 5's tool step passes the limit (6,400): the compaction runs before its second step.
    await turn(agent, 'p5')
    const [start, prune] = compactionEvents(agent.session)
    expect([start!.type, prune!.type]).toEqual(['compaction/start', 'compaction/prune'])
    expect(start!.data).toMatchObject({ reason: 'pressure', turn: 5, step: 2 })
    const data = prune!.data as { pruned: unknown[]; from: number; to: number; messages: unknown[] }
    // The three results over 500 tokens before the protected tail; B (100) is small, E is in the tail.
    expect(data.pruned).toEqual([
      { callId: 'cA', name: 'cat', tokens: 2_000, characters: 2_000 },
      { callId: 'cC', name: 'cat', tokens: 2_000, characters: 2_000 },
      { callId: 'cD', name: 'cat', tokens: 1_500, characters: 1_500 },
    ])
    // No model was asked.
    expect(h.summaryRequests).toEqual([])

    const stub = (id: string, n: number) => `user: result ${stubText('cat', id, n, n)}`
    const expected = texts(before).map((line) =>
      line === `user: result ${chars(2_000, 'A')}` ? stub('cA', 2_000) : line === `user: result ${chars(2_000, 'C')}` ? stub('cC', 2_000) : line === `user: result ${chars(1_500, 'D')}` ? stub('cD', 1_500) : line,
    )
    const after = texts(h.agentRequests.at(-1)!.messages)
    expect(after).toEqual([...expected, 'user: p5', 'assistant: call cat({"size":1000,"c":"E"})', `user: result ${chars(1_000, 'E')}`])
    expect(stubText('cat', 'cA', 2_000, 2_000)).toBe(
      '[Tool result elided by compaction to save context: cat (call cA) returned 2,000 characters, about 2,000 tokens. Call the tool again if you need this output.]',
    )
    // Every other message is the same message (same id); each stub keeps its call.
    const sent = h.agentRequests.at(-1)!.messages
    before.forEach((message, i) => {
      if (!after[i]!.includes('elided')) expect(sent[i]).toEqual(message)
      else expect(sent[i]!.content[0]).toMatchObject({ type: 'tool-result', toolCallId: (message.content[0] as { toolCallId: string }).toolCallId })
    })
    expect(h.root.compaction.status(agent).last).toMatchObject({ kind: 'prune', reason: 'pressure' })
    await h.expectClean()
  })
})
