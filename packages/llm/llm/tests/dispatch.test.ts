import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { scoped } from '@deepseek-ai/dsh-scope'
import { LlmError, type LlmAdapter, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { collect, deferred, fakeAdapter, hello, mountLlm, stop } from './helpers'

const usage: StreamChunk = { type: 'usage', usage: { inputTokens: 3, outputTokens: 1 } }

function errorFinish(code: string, message: string): StreamChunk {
  return { type: 'finish', reason: { kind: 'error', failure: { code, message } as never } }
}

async function streamWith(adapter: LlmAdapter, signal?: AbortSignal) {
  const root = await mountLlm()
  root.llm.registerAdapter(['p'], adapter)
  const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
  return call.stream({ messages: [], signal })
}

describe('dispatch never throws for provider failures (R-LLM-4)', () => {
  it('forwards a well-formed stream untouched, chunk objects included', async () => {
    const chunks: StreamChunk[] = [hello, usage, stop]
    const out = await collect(await streamWith(fakeAdapter(chunks)))
    expect(out).toEqual(chunks)
    expect(out.every((chunk, i) => chunk === chunks[i])).toBe(true)
  })

  it('classifies an adapter whose stream() throws synchronously', async () => {
    const adapter: LlmAdapter = {
      stream() {
        throw new LlmError({ code: 'AUTH', message: 'the API key was rejected (401)', status: 401 })
      },
    }
    expect(await collect(await streamWith(adapter))).toEqual([
      { type: 'finish', reason: { kind: 'error', failure: { code: 'AUTH', message: 'the API key was rejected (401)', status: 401 } } },
    ])
  })

  it('an LlmError whose failure has fields JSON cannot keep (an unset status, a NaN wait, an object) becomes a finish of plain JSON, as the session log requires', async () => {
    // The loop logs every chunk; the log refuses undefined and non-finite values, and a refused chunk fails the agent for good.
    const thrown = { code: 'SERVER', message: 'busy', status: undefined, retryAfterMs: Number.NaN, requestId: 'req_1', cause: new Error('x') }
    const adapter: LlmAdapter = {
      stream() {
        throw new LlmError(thrown as never)
      },
    }
    const chunks = await collect(await streamWith(adapter))
    const failure = { code: 'SERVER', message: 'busy', requestId: 'req_1' }
    expect({ chunks, failure: new LlmError(thrown as never).failure }).toStrictEqual({
      chunks: [{ type: 'finish', reason: { kind: 'error', failure } }],
      failure,
    })
  })

  it('classifies an adapter whose iterator factory throws', async () => {
    const adapter: LlmAdapter = {
      stream: () => ({
        [Symbol.asyncIterator]() {
          throw new Error('socket hang up')
        },
      }),
    }
    expect(await collect(await streamWith(adapter))).toEqual([errorFinish('UNKNOWN', 'socket hang up')])
  })

  it('classifies an adapter that returns something that is not a stream', async () => {
    const adapter = { stream: () => 42 } as unknown as LlmAdapter
    expect(await collect(await streamWith(adapter))).toEqual([errorFinish('UNKNOWN', 'the model stream for p/m is not an AsyncIterable')])
  })

  it('an adapter whose stream() is an async function (a promise, here rejected): a clear failure, and no unhandled rejection (Node would end the process)', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => void unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      const adapter = { stream: () => Promise.reject(new LlmError({ code: 'AUTH', message: 'no key' })) } as unknown as LlmAdapter
      expect(await collect(await streamWith(adapter))).toEqual([
        errorFinish(
          'UNKNOWN',
          "the model stream for p/m is a promise, not an AsyncIterable: an adapter's stream() returns the stream itself (write it as an async generator, `async *stream()`, not an async function)",
        ),
      ])
      // Node reports a rejection nobody handled once the microtasks of this macrotask have run.
      await new Promise((resolve) => setImmediate(resolve))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })

  it('classifies a throw before the first chunk', async () => {
    const adapter = fakeAdapter(async function* () {
      throw Object.assign(new Error('503 overloaded'), { code: 'SERVER' })
    })
    expect(await collect(await streamWith(adapter))).toEqual([errorFinish('SERVER', '503 overloaded')])
  })

  it('classifies a throw mid-iteration, after the chunks already delivered', async () => {
    const adapter = fakeAdapter(async function* () {
      yield hello
      throw new LlmError({ code: 'TRANSPORT', message: 'connection reset' })
    })
    expect(await collect(await streamWith(adapter))).toEqual([hello, errorFinish('TRANSPORT', 'connection reset')])
  })

  it('classifies a non-Error throw', async () => {
    const adapter = fakeAdapter(async function* () {
      yield hello
      throw 'boom'
    })
    expect(await collect(await streamWith(adapter))).toEqual([hello, errorFinish('UNKNOWN', 'boom')])
  })

  it('keeps an AbortError that the caller did not cause as an aborted finish with its failure', async () => {
    const adapter = fakeAdapter(async function* () {
      throw new DOMException('The operation was aborted', 'AbortError')
    })
    expect(await collect(await streamWith(adapter))).toEqual([
      { type: 'finish', reason: { kind: 'aborted', failure: { code: 'ABORTED', message: 'the model call was aborted' } } },
    ])
  })

  it('a chunk that is not an object becomes MALFORMED_STREAM and stops the adapter', async () => {
    const adapter = fakeAdapter(async function* () {
      yield hello
      yield null as never
      yield hello
    })
    expect(await collect(await streamWith(adapter))).toEqual([
      hello,
      errorFinish('MALFORMED_STREAM', 'the model stream for p/m yielded null instead of a chunk object'),
    ])
    expect(adapter.closed).toBe(1)
  })
})

describe('the stream protocol is enforced', () => {
  it('synthesizes EMPTY_RESPONSE for a stream that ends with nothing', async () => {
    expect(await collect(await streamWith(fakeAdapter([])))).toEqual([
      errorFinish('EMPTY_RESPONSE', 'the model stream for p/m ended without producing anything'),
    ])
  })

  it('synthesizes TRANSPORT for a stream that ends without finish after producing chunks', async () => {
    expect(await collect(await streamWith(fakeAdapter([hello, usage])))).toEqual([
      hello,
      usage,
      errorFinish('TRANSPORT', 'the model stream for p/m ended after 2 chunk(s) without a finish chunk; the connection was probably cut'),
    ])
  })

  it('does not forward chunks after finish and stops the adapter with return()', async () => {
    let pulledAfterFinish = false
    const adapter = fakeAdapter(async function* () {
      yield hello
      yield stop
      pulledAfterFinish = true
      yield { type: 'text-delta', index: 0, text: 'late' }
    })
    expect(await collect(await streamWith(adapter))).toEqual([hello, stop])
    expect({ pulledAfterFinish, closed: adapter.closed }).toEqual({ pulledAfterFinish: false, closed: 1 })
  })

  it('a second iteration of the same stream yields nothing and does not call the adapter again', async () => {
    const adapter = fakeAdapter([hello, stop])
    const stream = await streamWith(adapter)
    expect(await collect(stream)).toEqual([hello, stop])
    expect(await collect(stream)).toEqual([])
    expect(adapter.calls.length).toBe(1)
  })
})

describe('the protocol guard on hand-written adapter iterators', () => {
  /** An adapter whose iterator is a plain object: `next` is given per test. */
  function iteratorAdapter(next: () => unknown): LlmAdapter & { returned: number } {
    const adapter = {
      returned: 0,
      stream: () => ({
        [Symbol.asyncIterator]: () => ({
          next,
          return: () => {
            adapter.returned++
            return Promise.resolve({ done: true, value: undefined })
          },
        }),
      }),
    }
    return adapter as LlmAdapter & { returned: number }
  }

  it('answers pulls made without waiting in order, and nothing after finish', async () => {
    const chunks: StreamChunk[] = [hello, stop, hello]
    const gates = chunks.map(() => deferred<IteratorResult<StreamChunk>>())
    let pulls = 0
    const adapter = iteratorAdapter(() => gates[pulls++]!.promise)
    const iterator = (await streamWith(adapter))[Symbol.asyncIterator]()
    const first = iterator.next()
    // The first pull opens the source; later ones go straight to it.
    await Promise.resolve()
    const results = [first, iterator.next(), iterator.next()]
    gates.forEach((gate, i) => gate.resolve({ done: false, value: chunks[i]! }))
    expect(await Promise.all(results)).toEqual([
      { done: false, value: hello },
      { done: false, value: stop },
      { done: true, value: undefined },
    ])
  })

  it('accepts a source whose next() answers with a plain result instead of a promise', async () => {
    const chunks: StreamChunk[] = [hello, stop]
    let at = 0
    const adapter = iteratorAdapter(() => ({ done: false, value: chunks[at++] }))
    expect(await collect(await streamWith(adapter))).toEqual([hello, stop])
    expect(adapter.returned).toBe(1)
  })

  it('classifies a source whose next() throws synchronously, and does not ask it to return()', async () => {
    let at = 0
    const adapter = iteratorAdapter(() => {
      if (at++ === 0) return Promise.resolve({ done: false, value: hello })
      throw new LlmError({ code: 'TRANSPORT', message: 'socket closed' })
    })
    expect(await collect(await streamWith(adapter))).toEqual([hello, errorFinish('TRANSPORT', 'socket closed')])
    expect(adapter.returned).toBe(0)
  })

  it.each([
    ['a promise of undefined', () => Promise.resolve(undefined)],
    ['undefined', () => undefined],
    ['null', () => null],
  ])('a source whose next() answers with %s instead of an iterator result: MALFORMED_STREAM (iterated and pumped), and the source is stopped', async (_what, bad) => {
    const read = async (pumped: boolean) => {
      let at = 0
      const adapter = iteratorAdapter(() => (at++ === 0 ? Promise.resolve({ done: false, value: hello }) : bad()))
      const stream = (await streamWith(adapter)) as AsyncIterable<StreamChunk> & { pump(sink: (chunk: StreamChunk) => boolean): Promise<void> | undefined }
      let chunks: StreamChunk[] = []
      if (pumped) await stream.pump((chunk) => chunks.push(chunk) > 0)
      else chunks = await collect(stream)
      return { chunks, returned: adapter.returned }
    }
    const what = bad() instanceof Promise ? 'undefined' : String(bad())
    const expected = { chunks: [hello, errorFinish('MALFORMED_STREAM', `the model stream for p/m answered next() with ${what} instead of an iterator result`)], returned: 1 }
    expect([await read(false), await read(true)]).toEqual([expected, expected])
  })

  it('return() while a pull is pending: that pull settles done, and the source is stopped', async () => {
    const gate = deferred<IteratorResult<StreamChunk>>()
    const adapter = iteratorAdapter(() => gate.promise)
    const iterator = (await streamWith(adapter))[Symbol.asyncIterator]()
    const pending = iterator.next()
    await iterator.return!()
    gate.resolve({ done: false, value: hello })
    expect({ pending: await pending, returned: adapter.returned }).toEqual({ pending: { done: true, value: undefined }, returned: 1 })
  })
  it('a pending pull that fails after return(), or after an earlier pull brought the finish, adds no second terminal chunk', async () => {
    const failure = new LlmError({ code: 'TRANSPORT', message: 'socket closed' })
    // return() while a pull is pending, then that pull fails.
    const gate = deferred<IteratorResult<StreamChunk>>()
    const cut = iteratorAdapter(() => gate.promise)
    const iterator = (await streamWith(cut))[Symbol.asyncIterator]()
    const pending = iterator.next()
    await iterator.return!()
    gate.reject(failure)
    const afterReturn = { pending: await pending, returned: cut.returned }
    // Two pulls made without waiting: the first brings the finish, the second fails.
    const gates = [deferred<IteratorResult<StreamChunk>>(), deferred<IteratorResult<StreamChunk>>()]
    let pulls = 0
    const racing = iteratorAdapter(() => gates[pulls++]!.promise)
    const racer = (await streamWith(racing))[Symbol.asyncIterator]()
    const first = racer.next()
    await Promise.resolve()
    const second = racer.next()
    gates[0]!.resolve({ done: false, value: stop })
    gates[1]!.reject(failure)
    const afterFinish = [await first, await second, await racer.next()]
    expect({ afterReturn, afterFinish, stopped: racing.returned }).toEqual({
      afterReturn: { pending: { done: true, value: undefined }, returned: 1 },
      afterFinish: [{ done: false, value: stop }, { done: true, value: undefined }, { done: true, value: undefined }],
      stopped: 1,
    })
  })
})

describe('the in-memory fast path (an adapter stream that is also a synchronous Iterable)', () => {
  /** A source with both protocols whose asynchronous side must never be used. */
  function inMemoryAdapter(next: () => IteratorResult<StreamChunk>): LlmAdapter & { returned: number } {
    const adapter = {
      returned: 0,
      stream: () => ({
        [Symbol.asyncIterator]: () => {
          throw new Error('the asynchronous iterator was used')
        },
        [Symbol.iterator]: () => ({
          next,
          return: () => {
            adapter.returned++
            return { done: true, value: undefined }
          },
        }),
      }),
    }
    return adapter as unknown as LlmAdapter & { returned: number }
  }

  function chunksOf(chunks: StreamChunk[]): () => IteratorResult<StreamChunk> {
    let at = 0
    return () => (at < chunks.length ? { done: false, value: chunks[at++]! } : { done: true, value: undefined })
  }

  it('pulls the synchronous iterator, one chunk per next(), and stops it after finish', async () => {
    const adapter = inMemoryAdapter(chunksOf([hello, stop, hello]))
    expect(await collect(await streamWith(adapter))).toEqual([hello, stop])
    expect(adapter.returned).toBe(1)
  })

  it('holds it to the protocol like any source: a missing finish is synthesized', async () => {
    expect(await collect(await streamWith(inMemoryAdapter(chunksOf([hello]))))).toEqual([
      hello,
      errorFinish('TRANSPORT', 'the model stream for p/m ended after 1 chunk(s) without a finish chunk; the connection was probably cut'),
    ])
  })

  it('classifies a throw of its next()', async () => {
    let at = 0
    const adapter = inMemoryAdapter(() => {
      if (at++ === 0) return { done: false, value: hello }
      throw new LlmError({ code: 'RATE_LIMIT', message: 'slow down' })
    })
    expect(await collect(await streamWith(adapter))).toEqual([hello, errorFinish('RATE_LIMIT', 'slow down')])
    expect(adapter.returned).toBe(0)
  })

  it('a next() that answers undefined is MALFORMED_STREAM, not a TypeError, and the source is stopped', async () => {
    let at = 0
    const adapter = inMemoryAdapter(() => (at++ === 0 ? { done: false, value: hello } : (undefined as never)))
    const chunks = await collect(await streamWith(adapter))
    expect({ chunks, returned: adapter.returned }).toEqual({
      chunks: [hello, errorFinish('MALFORMED_STREAM', 'the model stream for p/m answered next() with undefined instead of an iterator result')],
      returned: 1,
    })
  })

  it('an abort by the consumer ends it at the next pull and stops the source', async () => {
    const controller = new AbortController()
    const adapter = inMemoryAdapter(chunksOf([hello, hello, stop]))
    const seen: StreamChunk[] = []
    for await (const chunk of await streamWith(adapter, controller.signal)) {
      seen.push(chunk)
      controller.abort()
    }
    expect({ seen, returned: adapter.returned }).toEqual({ seen: [hello, { type: 'finish', reason: { kind: 'aborted' } }], returned: 1 })
  })

  it('an llm/stream listener sees it as an ordinary stream', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], inMemoryAdapter(chunksOf([hello, stop])))
    const seen: StreamChunk[] = []
    root.on('llm/stream', (_call, next) => (async function* () {
      for await (const chunk of next()) {
        seen.push(chunk)
        yield chunk
      }
    })())
    const out = await collect(root.llm.stream({ provider: 'p', model: 'm', messages: [] }))
    expect({ seen, out }).toEqual({ seen: [hello, stop], out: [hello, stop] })
  })
})

describe('llm/stream listeners are looked up at the first pull', () => {
  it('a listener registered after stream() but before the first next() wraps the call', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([hello, stop]))
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
    const stream = call.stream({ messages: [] })
    root.on('llm/stream', () => (async function* () { yield stop })())
    expect(await collect(stream)).toEqual([stop])
  })

  it('a listener registered after the first pull does not touch the call in flight', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([hello, stop]))
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
    const iterator = call.stream({ messages: [] })[Symbol.asyncIterator]()
    const first = await iterator.next()
    root.on('llm/stream', () => (async function* () { yield stop })())
    expect([first, await iterator.next(), await iterator.next()]).toEqual([
      { done: false, value: hello },
      { done: false, value: stop },
      { done: true, value: undefined },
    ])
  })
})

describe('abort', () => {
  it('an aborted signal before dispatch never reaches the adapter', async () => {
    const adapter = fakeAdapter([hello, stop])
    const controller = new AbortController()
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], adapter)
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
    controller.abort()
    expect(await collect(call.stream({ messages: [], signal: controller.signal }))).toEqual([{ type: 'finish', reason: { kind: 'aborted' } }])
    expect(adapter.calls).toEqual([])
  })

  it('an adapter that stops with an abort error mid-stream ends with { kind: aborted } and no failure', async () => {
    const controller = new AbortController()
    const adapter = fakeAdapter(async function* (options) {
      // Like fetch: a pending read rejects with the signal's reason when it aborts.
      const read = deferred<never>()
      options.signal!.addEventListener('abort', () => read.reject(options.signal!.reason), { once: true })
      yield hello
      await read.promise
    })
    const seen: StreamChunk[] = []
    for await (const chunk of await streamWith(adapter, controller.signal)) {
      seen.push(chunk)
      if (chunk === hello) controller.abort()
    }
    expect(seen).toEqual([hello, { type: 'finish', reason: { kind: 'aborted' } }])
  })

  it('an adapter that ignores the abort and keeps yielding is cut at its next chunk and stopped', async () => {
    const controller = new AbortController()
    const adapter = fakeAdapter(async function* () {
      yield hello
      yield { type: 'text-delta', index: 0, text: ' more' }
      yield stop
    })
    const seen: StreamChunk[] = []
    for await (const chunk of await streamWith(adapter, controller.signal)) {
      seen.push(chunk)
      controller.abort()
    }
    expect(seen).toEqual([hello, { type: 'finish', reason: { kind: 'aborted' } }])
    expect(adapter.closed).toBe(1)
  })

  it('an adapter that ends silently after the abort ends with { kind: aborted }', async () => {
    const controller = new AbortController()
    const adapter = fakeAdapter(async function* () {
      yield hello
    })
    const seen: StreamChunk[] = []
    const stream = await streamWith(adapter, controller.signal)
    const iterator = stream[Symbol.asyncIterator]()
    seen.push((await iterator.next()).value!)
    // Aborting between pulls: the adapter's next pull ends without finish.
    const pending = iterator.next()
    controller.abort()
    seen.push((await pending).value!)
    expect(seen).toEqual([hello, { type: 'finish', reason: { kind: 'aborted' } }])
  })
})

describe('NO_ADAPTER (R-LLM-3)', () => {
  it('an unhandled route ends with a NO_ADAPTER error finish', async () => {
    const root = await mountLlm()
    const call = await root.llm.prepareCall({ provider: 'nobody', model: 'm' })
    expect(await collect(call.stream({ messages: [] }))).toEqual([
      errorFinish('NO_ADAPTER', 'no adapter is registered for provider "nobody" and no llm/stream listener handled nobody/m; mount an adapter plugin for it'),
    ])
  })

  it('an llm/stream listener can take over a route that has no adapter', async () => {
    const root = await mountLlm()
    root.on('llm/stream', (call, next) => {
      if (call.hasAdapter || call.config.provider !== 'echo') return next()
      return (async function* () {
        yield { type: 'text-delta', index: 0, text: `echo ${call.config.model}` } as StreamChunk
        yield stop
      })()
    })
    const call = await root.llm.prepareCall({ provider: 'echo', model: 'm1' })
    expect(await collect(call.stream({ messages: [] }))).toEqual([{ type: 'text-delta', index: 0, text: 'echo m1' }, stop])
  })
})

describe('llm/stream middleware', () => {
  it('receives the call descriptor and wraps the adapter stream', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([hello, stop], { id: 'm', reasoningEfforts: ['low'], defaultReasoningEffort: 'low' })
    root.llm.registerAdapter(['p'], adapter)
    const descriptors: unknown[] = []
    root.on('llm/stream', (call, next) => {
      descriptors.push({ config: call.config, model: call.model, hasAdapter: call.hasAdapter, options: call.options })
      return (async function* () {
        for await (const chunk of next()) {
          yield chunk.type === 'text-delta' ? { ...chunk, text: chunk.text.toUpperCase() } : chunk
        }
      })()
    })
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
    const messages: never[] = []
    expect(await collect(call.stream({ system: 's', messages }))).toEqual([{ type: 'text-delta', index: 0, text: 'HELLO' }, stop])
    expect(descriptors).toEqual([
      {
        config: { provider: 'p', model: 'm', reasoningEffort: 'low' },
        model: { id: 'm', reasoningEfforts: ['low'], defaultReasoningEffort: 'low' },
        hasAdapter: true,
        options: adapter.calls[0],
      },
    ])
    expect(adapter.calls[0]).toEqual({ provider: 'p', model: 'm', system: 's', messages, reasoningEffort: 'low' })
  })

  it('the first registered listener is outermost', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([hello, stop]))
    const order: string[] = []
    for (const name of ['outer', 'inner']) {
      root.on('llm/stream', (_call, next) => {
        order.push(`${name} in`)
        return (async function* () {
          try {
            yield* next()
          } finally {
            order.push(`${name} out`)
          }
        })()
      })
    }
    await collect(root.llm.stream({ provider: 'p', model: 'm', messages: [] }))
    expect(order).toEqual(['outer in', 'inner in', 'inner out', 'outer out'])
  })

  it('a short-circuiting listener keeps the adapter from being called', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([hello, stop])
    root.llm.registerAdapter(['p'], adapter)
    const cached: StreamChunk[] = [{ type: 'text-delta', index: 0, text: 'cached' }, stop]
    root.on('llm/stream', () => (async function* () { yield* cached })())
    expect(await collect(root.llm.stream({ provider: 'p', model: 'm', messages: [] }))).toEqual(cached)
    expect(adapter.calls).toEqual([])
  })

  it('sees adapter failures as a classified finish chunk, never as a throw', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter(async function* () {
      yield hello
      throw new LlmError({ code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 500 })
    }))
    const seen: StreamChunk[] = []
    root.on('llm/stream', (_call, next) => (async function* () {
      for await (const chunk of next()) {
        seen.push(chunk)
        yield chunk
      }
    })())
    const out = await collect(root.llm.stream({ provider: 'p', model: 'm', messages: [] }))
    const finish: StreamChunk = { type: 'finish', reason: { kind: 'error', failure: { code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 500 } } }
    expect({ seen, out }).toEqual({ seen: [hello, finish], out: [hello, finish] })
  })

  it('a listener that throws when called throws to the consumer', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([hello, stop])
    root.llm.registerAdapter(['p'], adapter)
    root.on('llm/stream', () => {
      throw new Error('middleware bug')
    })
    await expect(collect(root.llm.stream({ provider: 'p', model: 'm', messages: [] }))).rejects.toThrow('middleware bug')
    expect(adapter.calls).toEqual([])
  })

  it('a listener that throws mid-stream throws to the consumer and the adapter is stopped', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([hello, hello, stop])
    root.llm.registerAdapter(['p'], adapter)
    root.on('llm/stream', (_call, next) => (async function* () {
      for await (const chunk of next()) {
        yield chunk
        throw new Error('middleware failed after one chunk')
      }
    })())
    const seen: StreamChunk[] = []
    await expect((async () => {
      for await (const chunk of root.llm.stream({ provider: 'p', model: 'm', messages: [] })) seen.push(chunk)
    })()).rejects.toThrow('middleware failed after one chunk')
    expect({ seen, closed: adapter.closed }).toEqual({ seen: [hello], closed: 1 })
  })

  it('a listener that returns something that is not a stream is a MALFORMED_STREAM throw', async () => {
    const root = await mountLlm()
    root.on('llm/stream', () => 'nope' as never)
    const error = await collect(root.llm.stream({ provider: 'p', model: 'm', messages: [] })).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LlmError)
    expect((error as LlmError).failure).toEqual({
      code: 'MALFORMED_STREAM',
      message: 'an llm/stream listener returned string instead of an AsyncIterable for p/m',
    })
  })

  it('a listener stream is held to the protocol too: a missing finish is synthesized, chunks after finish dropped', async () => {
    const root = await mountLlm()
    let mode: 'no-finish' | 'after-finish' = 'no-finish'
    root.on('llm/stream', () => (async function* () {
      yield hello
      if (mode === 'after-finish') {
        yield stop
        yield hello
      }
    })())
    expect(await collect(root.llm.stream({ provider: 'p', model: 'm', messages: [] }))).toEqual([
      hello,
      errorFinish('TRANSPORT', 'the model stream for p/m ended after 1 chunk(s) without a finish chunk; the connection was probably cut'),
    ])
    mode = 'after-finish'
    expect(await collect(root.llm.stream({ provider: 'p', model: 'm', messages: [] }))).toEqual([hello, stop])
  })

  it('is scope-filtered by the request session: an agent-scoped listener sees only its own calls', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([stop]))
    const seen: string[] = []
    const listen = (ctx: Context, label: string) =>
      ctx.on('llm/stream', (call, next) => {
        seen.push(`${label}:${call.options.sessionId ?? '-'}`)
        return next()
      })
    listen(root, 'global')
    listen(scoped(root, 'a'), 'a')
    listen(scoped(root, 'b'), 'b')
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
    await collect(call.stream({ messages: [], sessionId: 'a' as never }))
    await collect(call.stream({ messages: [], sessionId: 'b' as never }))
    await collect(call.stream({ messages: [] }))
    expect(seen).toEqual(['global:a', 'a:a', 'global:b', 'b:b', 'global:-', 'a:-', 'b:-'])
  })

  it('a listener registered by a plugin stops applying when the plugin is disposed', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([hello, stop]))
    const fiber = root.plugin({
      apply: (ctx: Context) => void ctx.on('llm/stream', () => (async function* () { yield stop })()),
    })
    await fiber
    expect(await collect(root.llm.stream({ provider: 'p', model: 'm', messages: [] }))).toEqual([stop])
    await fiber.dispose()
    expect(await collect(root.llm.stream({ provider: 'p', model: 'm', messages: [] }))).toEqual([hello, stop])
  })
})

describe('the consumer', () => {
  it('an error thrown by the consumer propagates and the adapter is stopped', async () => {
    const adapter = fakeAdapter([hello, hello, stop])
    const stream = await streamWith(adapter)
    await expect((async () => {
      for await (const _chunk of stream) throw new Error('consumer failed')
    })()).rejects.toThrow('consumer failed')
    expect(adapter.closed).toBe(1)
  })

  it('breaking out of the loop stops the adapter', async () => {
    const adapter = fakeAdapter([hello, hello, stop])
    for await (const _chunk of await streamWith(adapter)) break
    expect(adapter.closed).toBe(1)
  })

  it('return() before the first pull dispatches nothing', async () => {
    const adapter = fakeAdapter([hello, stop])
    const stream = await streamWith(adapter)
    await stream[Symbol.asyncIterator]().return!()
    expect(await collect(stream)).toEqual([])
    expect(adapter.calls).toEqual([])
  })
})

describe('one-shot ctx.llm.stream', () => {
  it('prepares and dispatches', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([hello, stop], { id: 'm', reasoningEfforts: ['low'] })
    root.llm.registerAdapter(['p'], adapter)
    const messages: never[] = []
    expect(await collect(root.llm.stream({ provider: 'p', model: 'm', reasoningEffort: 'low', messages }))).toEqual([hello, stop])
    expect(adapter.calls).toEqual([{ provider: 'p', model: 'm', reasoningEffort: 'low', messages }])
  })

  it('pulls made without waiting, also while the call is prepared, are answered in call order (not done before the chunks)', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([hello, stop], { id: 'm' }))
    const stream = root.llm.stream({ provider: 'p', model: 'm', messages: [] })
    const results = [stream.next(), stream.next(), stream.next()]
    expect(await Promise.all(results)).toEqual([
      { done: false, value: hello },
      { done: false, value: stop },
      { done: true, value: undefined },
    ])
  })

  it('a model whose info has reasoningEfforts: null (an untyped adapter) accepts no effort: the same typed refusal as no list', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([stop], { id: 'm', reasoningEfforts: null } as never))
    expect(await collect(root.llm.stream({ provider: 'p', model: 'm', reasoningEffort: 'high', messages: [] }))).toEqual([
      errorFinish('INVALID_CONFIG', 'model "m" of provider "p" accepts no reasoning effort, but the call asks for "high": remove reasoningEffort'),
    ])
  })

  it('turns a prepare failure into a terminal finish chunk', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([stop], { id: 'm' }))
    expect(await collect(root.llm.stream({ provider: 'p', model: 'm', reasoningEffort: 'high', messages: [] }))).toEqual([
      errorFinish('INVALID_CONFIG', 'model "m" of provider "p" accepts no reasoning effort, but the call asks for "high": remove reasoningEffort'),
    ])
    expect(await collect(root.llm.stream({ provider: '', model: 'm', messages: [] }))).toEqual([
      errorFinish('INVALID_CONFIG', 'the call config names no provider: set config.provider (an agent gets one from agentDefaultModel or an agent/request listener)'),
    ])
    expect(await collect(root.llm.stream(null as never))).toEqual([
      errorFinish('INVALID_CONFIG', 'ctx.llm.stream: options must be an object with provider, model and messages'),
    ])
    expect(await collect(root.llm.stream({ provider: 'p', model: 'm', messages: 'no' as never }))).toEqual([
      errorFinish('INVALID_CONFIG', 'PreparedCall.stream: request.messages must be an array of messages'),
    ])
  })

  it('an already aborted signal gives { kind: aborted }', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([hello, stop])
    root.llm.registerAdapter(['p'], adapter)
    expect(await collect(root.llm.stream({ provider: 'p', model: 'm', messages: [], signal: AbortSignal.abort() }))).toEqual([
      { type: 'finish', reason: { kind: 'aborted' } },
    ])
    expect(adapter.calls).toEqual([])
  })

  it('NO_ADAPTER arrives as a chunk', async () => {
    const root = await mountLlm()
    const [chunk] = await collect(root.llm.stream({ provider: 'x', model: 'y', messages: [] }))
    expect(chunk).toMatchObject({ type: 'finish', reason: { kind: 'error', failure: { code: 'NO_ADAPTER' } } })
  })

  it('return() while the call is being prepared dispatches nothing', async () => {
    const root = await mountLlm()
    const gate = deferred<{ id: string }>()
    const adapter = fakeAdapter([hello, stop])
    root.llm.registerAdapter(['p'], { stream: adapter.stream, resolveModel: () => gate.promise })
    const stream = root.llm.stream({ provider: 'p', model: 'm', messages: [] })
    const first = stream.next()
    await stream.return!()
    gate.resolve({ id: 'm' })
    expect(await first).toEqual({ done: true, value: undefined })
    expect(adapter.calls).toEqual([])
  })
})

describe('one-shot return() during a failing prepare', () => {
  it('yields nothing once the consumer stopped, even if prepare then fails', async () => {
    const root = await mountLlm()
    const gate = deferred<never>()
    root.llm.registerAdapter(['p'], { stream: fakeAdapter([stop]).stream, resolveModel: () => gate.promise })
    const stream = root.llm.stream({ provider: 'p', model: 'm', messages: [] })
    const first = stream.next()
    await stream.return!()
    gate.reject(new Error('models endpoint down'))
    expect(await first).toEqual({ done: true, value: undefined })
  })
})
