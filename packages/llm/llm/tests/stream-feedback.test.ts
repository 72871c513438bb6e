import { describe, expect, it, vi } from 'vitest'
import type { StreamChunk } from '@deepseek-ai/dsh-llm'

const answer = (): StreamChunk[] => [
  { type: 'text-delta', index: 0, text: 'Hel' },
  { type: 'text-delta', index: 0, text: 'lo' },
  { type: 'usage', usage: { inputTokens: 3, outputTokens: 2 } },
  { type: 'finish', reason: { kind: 'stop' } },
]

/** A source whose pulls settle in later macrotasks (as a network read's), counting its pulls and `return()`. */
function slowSource(chunks: StreamChunk[]) {
  const counts = { pulls: 0, returned: 0 }
  let at = 0
  const iterator: AsyncIterator<StreamChunk> = {
    next: () => {
      counts.pulls++
      const result: IteratorResult<StreamChunk> = at < chunks.length ? { value: chunks[at++]!, done: false } : { value: undefined, done: true }
      return new Promise((resolve) => setImmediate(() => resolve(result)))
    },
    return: () => {
      counts.returned++
      return Promise.resolve({ value: undefined, done: true })
    },
  }
  return { counts, source: { route: 'p/m', signal: undefined, open: () => ({ [Symbol.asyncIterator]: () => iterator }) } }
}

describe("the chunk path's feedback prime", () => {
  it('does not run when the module loads; the first pump runs it once, and that pump streams exactly its own chunks', async () => {
    vi.resetModules()
    const feedback = await import('../src/stream-feedback')
    const { ProtocolStream } = await import('../src/protocol-stream')
    const { createAssembler } = await import('../src/assembler')
    expect(feedback.streamPathPrimed()).toBe(false)

    const first = slowSource(answer())
    const heard: StreamChunk[] = []
    const assembler = createAssembler()
    const pending = new ProtocolStream(first.source, true).pump((chunk) => {
      heard.push(chunk)
      assembler.push(chunk)
      return true
    })
    expect(feedback.streamPathPrimed()).toBe(true)
    await pending
    expect(heard).toEqual(answer())
    expect(first.counts).toEqual({ pulls: 4, returned: 1 })
    expect(assembler.result()).toEqual({
      content: [{ type: 'text', text: 'Hello' }],
      usage: { inputTokens: 3, outputTokens: 2 },
      finishReason: { kind: 'stop' },
    })

    // A later pump runs no prime again and streams the same.
    const second = slowSource(answer())
    const again: StreamChunk[] = []
    await new ProtocolStream(second.source, true).pump((chunk) => {
      again.push(chunk)
      return true
    })
    expect(again).toEqual(answer())
    expect(second.counts).toEqual({ pulls: 4, returned: 1 })
  })
})
