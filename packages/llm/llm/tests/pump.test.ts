import { describe, expect, it } from 'vitest'
import { LlmError, type LlmAdapter, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { collect, deferred, fakeAdapter, hello, mountLlm, stop } from './helpers'

/** What `PreparedCall.stream` returns besides iteration: the loop's pump (see `CallStream.pump`). */
type Pumpable = AsyncIterable<StreamChunk> & { pump(sink: (chunk: StreamChunk) => boolean, sinkChecks?: AbortSignal): Promise<void> | undefined }

const aborted: StreamChunk = { type: 'finish', reason: { kind: 'aborted' } }

async function streamWith(adapter: LlmAdapter, signal?: AbortSignal): Promise<Pumpable> {
  const root = await mountLlm()
  root.llm.registerAdapter(['p'], adapter)
  const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
  return call.stream({ messages: [], signal }) as Pumpable
}

/** Pumps a stream to its end: the chunks, and whether it finished without a promise. */
async function pumped(stream: Pumpable, stopAfter = Infinity): Promise<{ chunks: StreamChunk[]; synchronous: boolean }> {
  const chunks: StreamChunk[] = []
  const pending = stream.pump((chunk) => {
    chunks.push(chunk)
    return chunks.length < stopAfter
  })
  if (pending !== undefined) await pending
  return { chunks, synchronous: pending === undefined }
}

/** An adapter stream with both protocols (the in-memory fast path), counting `return()`. */
function inMemoryAdapter(chunks: StreamChunk[], throwAt = -1): LlmAdapter & { returned: number } {
  const adapter = {
    returned: 0,
    stream: () => {
      let at = 0
      return {
        [Symbol.asyncIterator]: () => {
          throw new Error('the asynchronous iterator was used')
        },
        [Symbol.iterator]: () => ({
          next: () => {
            if (at === throwAt) throw new LlmError({ code: 'RATE_LIMIT', message: 'slow down' })
            return at < chunks.length ? { done: false, value: chunks[at++]! } : { done: true, value: undefined }
          },
          return: () => {
            adapter.returned++
            return { done: true, value: undefined }
          },
        }),
      }
    },
  }
  return adapter as unknown as LlmAdapter & { returned: number }
}

describe('pump: the same stream as iteration, without a promise per chunk', () => {
  const sources: Array<[string, () => LlmAdapter]> = [
    ['an asynchronous source', () => fakeAdapter([hello, hello, stop])],
    ['an asynchronous source with chunks after finish', () => fakeAdapter([hello, stop, hello])],
    ['an asynchronous source without finish', () => fakeAdapter([hello])],
    ['an empty asynchronous source', () => fakeAdapter([])],
    [
      'an asynchronous source that throws mid-stream',
      () =>
        fakeAdapter(async function* () {
          yield hello
          throw new LlmError({ code: 'TRANSPORT', message: 'connection reset' })
        }),
    ],
    ['a source that yields a non-chunk', () => fakeAdapter([hello, 7 as never, hello])],
    ['an in-memory source', () => inMemoryAdapter([hello, hello, stop])],
    ['an in-memory source with chunks after finish', () => inMemoryAdapter([hello, stop, hello])],
    ['an in-memory source without finish', () => inMemoryAdapter([hello])],
    ['an in-memory source whose next() throws', () => inMemoryAdapter([hello, stop], 1)],
    [
      'a stream() that throws',
      () => ({
        stream() {
          throw new LlmError({ code: 'AUTH', message: 'the API key was rejected (401)', status: 401 })
        },
      }),
    ],
  ]

  it.each(sources)('%s: the chunks iteration yields, in order', async (_, make) => {
    const iterated = await collect(await streamWith(make()))
    expect((await pumped(await streamWith(make()))).chunks).toEqual(iterated)
  })

  it('an in-memory source is read in one synchronous call and stopped after its finish', async () => {
    const adapter = inMemoryAdapter([hello, hello, stop, hello])
    const result = await pumped(await streamWith(adapter))
    expect({ ...result, returned: adapter.returned }).toEqual({ chunks: [hello, hello, stop], synchronous: true, returned: 1 })
  })

  it('an asynchronous source settles the promise after its last chunk, and is stopped after finish', async () => {
    const adapter = fakeAdapter([hello, stop, hello])
    const result = await pumped(await streamWith(adapter))
    expect({ ...result, closed: adapter.closed }).toEqual({ chunks: [hello, stop], synchronous: false, closed: 1 })
  })

  it('hands each chunk over as it arrives, not once the stream ended', async () => {
    const gates = [deferred(), deferred()]
    const adapter = fakeAdapter(async function* () {
      yield hello
      await gates[0]!.promise
      yield hello
      await gates[1]!.promise
      yield stop
    })
    const seen: StreamChunk[] = []
    const stream = await streamWith(adapter)
    const done = stream.pump((chunk) => {
      seen.push(chunk)
      if (seen.length === 1) gates[0]!.resolve()
      if (seen.length === 2) gates[1]!.resolve()
      return true
    })
    await done
    expect(seen).toEqual([hello, hello, stop])
  })

  it.each([
    ['in-memory', () => inMemoryAdapter([hello, hello, stop])],
    ['asynchronous', () => fakeAdapter([hello, hello, stop])],
  ] as const)('a sink that returns false stops reading and the %s source is stopped', async (_, make) => {
    const adapter = make()
    const result = await pumped(await streamWith(adapter), 1)
    const stopped = 'returned' in adapter ? adapter.returned : (adapter as ReturnType<typeof fakeAdapter>).closed
    expect({ chunks: result.chunks, stopped }).toEqual({ chunks: [hello], stopped: 1 })
  })

  it.each([
    ['in-memory', () => inMemoryAdapter([hello, hello, stop])],
    ['asynchronous', () => fakeAdapter([hello, hello, stop])],
  ] as const)('a sink that throws stops the %s source and the throw reaches the caller', async (_, make) => {
    const adapter = make()
    const stream = await streamWith(adapter)
    const failure = new Error('the log refused the chunk')
    const outcome = await (async () => {
      const pending = stream.pump(() => {
        throw failure
      })
      await pending
    })().catch((error: unknown) => error)
    const stopped = 'returned' in adapter ? adapter.returned : (adapter as ReturnType<typeof fakeAdapter>).closed
    expect({ outcome, stopped }).toEqual({ outcome: failure, stopped: 1 })
  })

  it('an abort seen at the next pull ends with { kind: aborted } and stops the source', async () => {
    const controller = new AbortController()
    const adapter = inMemoryAdapter([hello, hello, stop])
    const seen: StreamChunk[] = []
    const pending = (await streamWith(adapter, controller.signal)).pump((chunk) => {
      seen.push(chunk)
      controller.abort()
      return true
    })
    expect({ pending, seen, returned: adapter.returned }).toEqual({ pending: undefined, seen: [hello, aborted], returned: 1 })
  })

  it('a sink that checks the call\'s own signal itself gets the real chunks up to the abort, and the source is stopped', async () => {
    const controller = new AbortController()
    const adapter = inMemoryAdapter([hello, hello, hello, stop])
    const seen: StreamChunk[] = []
    const pending = (await streamWith(adapter, controller.signal)).pump((chunk) => {
      if (controller.signal.aborted) return false
      seen.push(chunk)
      if (seen.length === 2) controller.abort()
      return true
    }, controller.signal)
    expect({ pending, seen, returned: adapter.returned }).toEqual({ pending: undefined, seen: [hello, hello], returned: 1 })
  })

  it('a sink that checks the call\'s own signal: the pump reads it only where it classifies the end, not before each chunk', async () => {
    // A signal-like object (read with `Reflect.get`), so every read of `aborted` is counted.
    let reads = 0
    const signal = {
      get aborted() {
        reads++
        return false
      },
      reason: undefined,
      addEventListener() {},
      removeEventListener() {},
    } as unknown as AbortSignal
    const own = await pumped((await streamWith(fakeAdapter([hello, hello, hello, stop]), signal)), Infinity)
    const readsWithoutSinkCheck = reads
    reads = 0
    const stream = await streamWith(fakeAdapter([hello, hello, hello, stop]), signal)
    const seen: StreamChunk[] = []
    await stream.pump((chunk) => {
      if (signal.aborted) return false
      seen.push(chunk)
      return true
    }, signal)
    // Four reads by the sink (one per chunk) and one by the adapter source's open(): the pump adds none per chunk (with
    // its own check as well it would be nine).
    expect({ own: own.chunks, seen, readsWithoutSinkCheck, reads }).toEqual({ own: [hello, hello, hello, stop], seen: [hello, hello, hello, stop], readsWithoutSinkCheck: 5, reads: 5 })
  })

  it('a sink that checks another signal does not change the pump\'s own check', async () => {
    const controller = new AbortController()
    const adapter = inMemoryAdapter([hello, hello, stop])
    const seen: StreamChunk[] = []
    const other = new AbortController().signal
    const pending = (await streamWith(adapter, controller.signal)).pump((chunk) => {
      if (other.aborted) return false
      seen.push(chunk)
      controller.abort()
      return true
    }, other)
    expect({ pending, seen, returned: adapter.returned }).toEqual({ pending: undefined, seen: [hello, aborted], returned: 1 })
  })

  const endsAfter: Array<[string, (gate: Promise<void>, pulled: () => void) => AsyncGenerator<StreamChunk>]> = [
    [
      'ends',
      async function* (gate, pulled) {
        yield hello
        pulled()
        await gate
      },
    ],
    [
      'throws',
      async function* (gate, pulled) {
        yield hello
        pulled()
        await gate
        throw new LlmError({ code: 'TRANSPORT', message: 'connection reset' })
      },
    ],
  ]

  it.each(endsAfter)('a sink that checks the call\'s own signal is still offered an aborted finish when the source %s after the abort', async (_name, body) => {
    const controller = new AbortController()
    const gate = deferred()
    const waiting = deferred()
    const stream = await streamWith(fakeAdapter(() => body(gate.promise, waiting.resolve)), controller.signal)
    const taken: StreamChunk[] = []
    const offeredAfterAbort: StreamChunk[] = []
    const pending = stream.pump((chunk) => {
      if (controller.signal.aborted) {
        offeredAfterAbort.push(chunk)
        return false
      }
      taken.push(chunk)
      return true
    }, controller.signal)
    // The source's next pull is pending when the call is aborted; then the source ends (or throws) without a finish.
    await waiting.promise
    controller.abort()
    gate.resolve()
    await pending
    expect({ taken, offeredAfterAbort }).toEqual({ taken: [hello], offeredAfterAbort: [aborted] })
  })

  it('a signal that is not one of Node\'s own (a signal-like object) is still read before every chunk', async () => {
    const signal = { aborted: false, reason: undefined, addEventListener() {}, removeEventListener() {} }
    const adapter = inMemoryAdapter([hello, hello, stop])
    const seen: StreamChunk[] = []
    const pending = (await streamWith(adapter, signal as unknown as AbortSignal)).pump((chunk) => {
      seen.push(chunk)
      signal.aborted = true
      return true
    })
    expect({ pending, seen, returned: adapter.returned }).toEqual({ pending: undefined, seen: [hello, aborted], returned: 1 })
  })

  it('a Node signal with an aborted property of its own is read through it, not through Node\'s getter', async () => {
    const controller = new AbortController()
    let said = false
    Object.defineProperty(controller.signal, 'aborted', { get: () => said })
    const adapter = fakeAdapter([hello, hello, stop])
    const seen: StreamChunk[] = []
    await (await streamWith(adapter, controller.signal)).pump((chunk) => {
      seen.push(chunk)
      said = true
      return true
    })
    expect(seen).toEqual([hello, aborted])
  })

  it('an llm/stream middleware is pumped like a source; its throw mid-stream reaches the caller and the adapter is stopped', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([hello, hello, stop])
    root.llm.registerAdapter(['p'], adapter)
    root.on('llm/stream', (_call, next) =>
      (async function* () {
        for await (const chunk of next()) {
          yield chunk
          throw new Error('middleware failed after one chunk')
        }
      })(),
    )
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
    const seen: StreamChunk[] = []
    const outcome = await (async () => {
      await (call.stream({ messages: [] }) as Pumpable).pump((chunk) => {
        seen.push(chunk)
        return true
      })
    })().catch((error: unknown) => (error as Error).message)
    expect({ outcome, seen, closed: adapter.closed }).toEqual({ outcome: 'middleware failed after one chunk', seen: [hello], closed: 1 })
  })

  it('a middleware that throws when called throws from pump', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([hello, stop]))
    root.on('llm/stream', () => {
      throw new Error('middleware bug')
    })
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
    const stream = call.stream({ messages: [] }) as Pumpable
    expect(() => stream.pump(() => true)).toThrow('middleware bug')
  })

  it('a stream already read yields nothing to a pump', async () => {
    const stream = await streamWith(fakeAdapter([hello, stop]))
    await collect(stream)
    expect(await pumped(stream)).toEqual({ chunks: [], synchronous: true })
  })

  it('a missing finish after an abort is { kind: aborted }, as in iteration', async () => {
    const controller = new AbortController()
    const adapter = fakeAdapter(async function* () {
      yield hello
      controller.abort()
    })
    expect((await pumped(await streamWith(adapter, controller.signal))).chunks).toEqual([hello, aborted])
  })
})
