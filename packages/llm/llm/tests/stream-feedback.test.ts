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

/** A source answering every pull plainly (chunks at hand, as a network read's after its first), counting its pulls and `return()`. */
function atHandSource(chunks: StreamChunk[]) {
  const counts = { pulls: 0, returned: 0 }
  let at = 0
  const iterator = {
    next: (): IteratorResult<StreamChunk> => {
      counts.pulls++
      return at < chunks.length ? { done: false, value: chunks[at++]! } : { done: true, value: undefined }
    },
    return: () => {
      counts.returned++
      return Promise.resolve({ done: true as const, value: undefined })
    },
  }
  return { counts, source: { route: 'p/m', signal: undefined, open: () => ({ [Symbol.asyncIterator]: () => iterator as unknown as AsyncIterator<StreamChunk> }) } }
}

/** Waits for the next turn of the event loop: every microtask queued before (the prime's streams) has run. */
const macrotask = () => new Promise((resolve) => setImmediate(resolve))

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

  it('runs once at a first pump over chunks at hand, and its sample streams reach neither that pump nor its source', async () => {
    vi.resetModules()
    const feedback = await import('../src/stream-feedback')
    const { ProtocolStream } = await import('../src/protocol-stream')
    expect(feedback.streamPathPrimed()).toBe(false)

    const first = atHandSource(answer())
    const heard: StreamChunk[] = []
    const stream = new ProtocolStream(first.source, true)
    const pending = stream.pump((chunk) => {
      heard.push(chunk)
      return true
    })
    expect(feedback.streamPathPrimed()).toBe(true)
    // Every chunk was at hand: delivered before pump() returned; only the source's return() may still be pending.
    expect(heard).toEqual(answer())
    await pending
    // The prime's streams (microtasks after the first pump's call) are over: nothing more reached the sink or the source.
    await macrotask()
    expect(heard).toEqual(answer())
    expect(first.counts).toEqual({ pulls: 4, returned: 1 })

    // Read with next() instead, a stream over chunks at hand yields exactly its own chunks too.
    const second = atHandSource(answer())
    const read: StreamChunk[] = []
    for await (const chunk of new ProtocolStream(second.source, true)) read.push(chunk)
    expect(read).toEqual(answer())
    expect(second.counts).toEqual({ pulls: 4, returned: 1 })
  })
})
