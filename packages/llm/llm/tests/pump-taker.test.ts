import { describe, expect, it } from 'vitest'
import type { LlmAdapter, StreamChunk } from '@deepseek-ai/dsh-llm'
import { fakeAdapter, hello, mountLlm, stop } from './helpers'

/** A sink object (`ChunkTaker`): `take` must be called as its method. */
class Recorder {
  readonly chunks: StreamChunk[] = []
  readonly receivers: unknown[] = []
  constructor(
    private readonly stopAfter = Infinity,
    private readonly throwAt = -1,
  ) {}

  take(chunk: StreamChunk): boolean {
    this.receivers.push(this)
    if (this.chunks.length === this.throwAt) throw new Error('sink broke')
    this.chunks.push(chunk)
    return this.chunks.length < this.stopAfter
  }
}

type Pumpable = AsyncIterable<StreamChunk> & { pump(sink: Recorder, sinkChecks?: AbortSignal): Promise<void> | undefined }

/** An asynchronous source counting `return()`. */
function counted(chunks: StreamChunk[]): LlmAdapter & { returned: number } {
  const inner = fakeAdapter(chunks)
  const adapter = {
    returned: 0,
    stream(options: Parameters<LlmAdapter['stream']>[0]) {
      const iterator = inner.stream(options)[Symbol.asyncIterator]()
      return {
        [Symbol.asyncIterator]: () => ({
          next: () => iterator.next(),
          return: () => {
            adapter.returned++
            return Promise.resolve({ done: true as const, value: undefined })
          },
        }),
      }
    },
  }
  return adapter as unknown as LlmAdapter & { returned: number }
}

async function streamWith(adapter: LlmAdapter): Promise<Pumpable> {
  const root = await mountLlm()
  root.llm.registerAdapter(['p'], adapter)
  const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
  return call.stream({ messages: [] }) as Pumpable
}

describe('pump with a sink object (ChunkTaker)', () => {
  it('calls take as the object’s method for every chunk, in order, and stops the source after finish', async () => {
    const adapter = counted([hello, hello, stop, hello])
    const recorder = new Recorder()
    await (await streamWith(adapter)).pump(recorder)
    expect(recorder.chunks).toEqual([hello, hello, stop])
    expect(recorder.receivers.every((receiver) => receiver === recorder)).toBe(true)
    expect(adapter.returned).toBe(1)
  })

  it('stops reading when take returns false, and stops the source', async () => {
    const adapter = counted([hello, hello, hello, stop])
    const recorder = new Recorder(2)
    await (await streamWith(adapter)).pump(recorder)
    expect({ chunks: recorder.chunks, returned: adapter.returned }).toEqual({ chunks: [hello, hello], returned: 1 })
  })

  it('rethrows a throw of take once the source is stopped', async () => {
    const adapter = counted([hello, hello, stop])
    const recorder = new Recorder(Infinity, 1)
    const outcome = await Promise.resolve((await streamWith(adapter)).pump(recorder)).then(
      () => 'resolved',
      (error: Error) => error.message,
    )
    expect({ outcome, chunks: recorder.chunks, returned: adapter.returned }).toEqual({ outcome: 'sink broke', chunks: [hello], returned: 1 })
  })
})
