import { describe, expect, it, vi } from 'vitest'
import type { StreamChunk } from '@deepseek-ai/dsh-llm'

describe("the text replies' feedback prime", () => {
  it('does not run when the module loads; the first text reply runs it once and plays exactly its own chunks', async () => {
    vi.resetModules()
    const plan = await import('../src/plan')
    expect(plan.textRepliesPrimed()).toBe(false)
    const options = { textChunking: 3 as const, argumentChunkSize: 8, usage: { inputTokens: 7, outputTokens: 5 } }
    const play = (): StreamChunk[] => {
      const iterator = plan.replyChunks({ text: 'Hello there' }, 0, 0, options)
      const out: StreamChunk[] = []
      for (let result = iterator.next(); !result.done; result = iterator.next()) out.push(result.value)
      return out
    }
    const expected: StreamChunk[] = [
      { type: 'text-delta', index: 0, text: 'Hel' },
      { type: 'text-delta', index: 0, text: 'lo ' },
      { type: 'text-delta', index: 0, text: 'the' },
      { type: 'text-delta', index: 0, text: 're' },
      { type: 'usage', usage: { inputTokens: 7, outputTokens: 5 } },
      { type: 'finish', reason: { kind: 'stop' } },
    ]
    expect(play()).toEqual(expected)
    expect(plan.textRepliesPrimed()).toBe(true)
    expect(play()).toEqual(expected)
  })
})
