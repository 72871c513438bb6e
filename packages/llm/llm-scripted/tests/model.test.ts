import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import LlmService, { assemble, createUserMessage, type LlmRequest, type Message, type StreamChunk } from '@deepseek-ai/dsh-llm'
import ScriptedPlugin, { Config, ScriptedModel } from '@deepseek-ai/dsh-llm-scripted'
import { collect, drain, mounted, options, stop } from './helpers'

describe('recording', () => {
  it('records a copy of every request at receipt: a history that grows later does not change it', async () => {
    const model = new ScriptedModel({ script: ['a', 'b'] })
    const root = await mounted(model)
    const history: Message[] = [createUserMessage('one')]
    const tools = [{ name: 'list_dir', description: 'List a directory', parameters: { type: 'object' } }]
    const call = await root.llm.prepareCall({ provider: 'scripted', model: 'demo', maxTokens: 50, temperature: 0.5 })
    await collect(call.stream({ system: 'sys', tools, messages: history, sessionId: 's1' as never }))
    history.push(createUserMessage('two'))
    await collect(call.stream({ system: 'sys', tools, messages: history }))
    expect(model.requests).toEqual([
      { provider: 'scripted', model: 'demo', system: 'sys', tools, messages: [history[0]], maxTokens: 50, temperature: 0.5, sessionId: 's1' },
      { provider: 'scripted', model: 'demo', system: 'sys', tools, messages: history, maxTokens: 50, temperature: 0.5 },
    ])
    expect(model.requests[0]!.messages).not.toBe(history)
    expect(model.calls).toBe(2)
  })

  it('records the effective reasoning effort the call was prepared with', async () => {
    const model = new ScriptedModel({ script: ['a'], models: [{ id: 'thinker', reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low' }] })
    const root = await mounted(model)
    await collect(root.llm.stream({ provider: 'scripted', model: 'thinker', messages: [] }))
    expect(model.requests.map((r) => r.reasoningEffort)).toEqual(['low'])
  })

  it('can be switched off', async () => {
    const model = new ScriptedModel({ script: ['a'], record: false })
    await collect(model.stream(options()))
    expect({ requests: model.requests, calls: model.calls }).toEqual({ requests: [], calls: 1 })
  })
})

describe('resolveModel', () => {
  it('reports configured models and a model with no reasoning efforts otherwise', () => {
    const model = new ScriptedModel({ models: [{ id: 'thinker', reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'high', contextWindow: 1000 }] })
    expect([model.resolveModel('thinker'), model.resolveModel('other')]).toEqual([
      { id: 'thinker', reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'high', contextWindow: 1000 },
      { id: 'other' },
    ])
  })

  it('lets ctx.llm validate efforts against them', async () => {
    const model = new ScriptedModel({ models: [{ id: 'thinker', reasoningEfforts: ['low'] }] })
    const root = await mounted(model)
    await expect(root.llm.prepareCall({ provider: 'scripted', model: 'plain', reasoningEffort: 'low' })).rejects.toMatchObject({ code: 'INVALID_CONFIG' })
    await expect(root.llm.prepareCall({ provider: 'scripted', model: 'thinker', reasoningEffort: 'low' })).resolves.toMatchObject({ config: { reasoningEffort: 'low' } })
  })
})

describe('programmable mode', () => {
  it('asks the responder with the live request and the call index', async () => {
    const seen: Array<[LlmRequest, number]> = []
    const model = new ScriptedModel({
      respond: (request, index) => {
        seen.push([request, index])
        return index === 0 ? 'first' : Promise.resolve({ text: 'second', finish: 'max-tokens' as const, usage: false as const })
      },
      usage: false,
    })
    const messages = [createUserMessage('q')]
    const first = assemble(await collect(model.stream(options(messages))))
    const second = assemble(await collect(model.stream(options(messages))))
    expect([first, second]).toEqual([
      { content: [{ type: 'text', text: 'first' }], finishReason: { kind: 'stop' } },
      { content: [{ type: 'text', text: 'second' }], finishReason: { kind: 'max-tokens' } },
    ])
    expect(seen.map(([request, index]) => [request.messages === messages, index])).toEqual([[true, 0], [true, 1]])
  })

  it('uses the script first, then the responder', async () => {
    const model = new ScriptedModel({ script: ['scripted'], respond: () => 'responded', usage: false })
    const texts = []
    for (let i = 0; i < 2; i++) texts.push(assemble(await collect(model.stream(options()))).content)
    expect(texts).toEqual([[{ type: 'text', text: 'scripted' }], [{ type: 'text', text: 'responded' }]])
  })

  it('a responder that throws or returns a bad reply fails the stream (classified by ctx.llm)', async () => {
    const model = new ScriptedModel({
      respond: (_request, index) => {
        if (index === 0) throw new Error('responder bug')
        if (index === 2) return { toolCalls: [{ name: 'ok' }, { name: 'a', arguments: 3 }] } as never
        return { text: 'x', answer: 'y' } as never
      },
    })
    const root = await mounted(model)
    expect(await collect(root.llm.stream(options()))).toEqual([
      { type: 'finish', reason: { kind: 'error', failure: { code: 'UNKNOWN', message: 'responder bug' } } },
    ])
    expect(await collect(root.llm.stream(options()))).toEqual([
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: { code: 'UNKNOWN', message: "the responder's reply to call #1 has an unknown field \"answer\" (a responder answers one call at a time)" },
        },
      },
    ])
    expect(await collect(root.llm.stream(options()))).toEqual([
      { type: 'finish', reason: { kind: 'error', failure: { code: 'UNKNOWN', message: "the responder's reply to call #2.toolCalls[1].arguments must be an object or a JSON string" } } },
    ])
  })
})

describe('the scripted stream, pulled directly', () => {
  const text = (t: string): StreamChunk => ({ type: 'text-delta', index: 0, text: t })
  const done = { done: true, value: undefined }

  it('return() ends it: later pulls are done', async () => {
    const model = new ScriptedModel({ script: ['one two three'], usage: false })
    const iterator = model.stream(options())[Symbol.asyncIterator]()
    const first = await iterator.next()
    expect([first, await iterator.return!(), await iterator.next()]).toEqual([{ done: false, value: text('one') }, done, done])
  })

  it('an abort before a pull throws the signal reason from that pull, and the stream is over', async () => {
    const controller = new AbortController()
    const model = new ScriptedModel({ script: ['one two'], usage: false })
    const iterator = model.stream(options(undefined, { signal: controller.signal }))[Symbol.asyncIterator]()
    const first = await iterator.next()
    controller.abort(new Error('stop now'))
    const error = await iterator.next().catch((e: unknown) => e)
    expect([first, (error as Error).message, await iterator.next()]).toEqual([{ done: false, value: text('one') }, 'stop now', done])
  })

  it('a signal that is not one of Node\'s own (a signal-like object) is read before every pull, at hand or awaited', async () => {
    const signal = { aborted: false, reason: new Error('stop now'), addEventListener() {}, removeEventListener() {} }
    const stream = new ScriptedModel({ script: ['one two', 'one two'], usage: false }).stream(options(undefined, { signal: signal as unknown as AbortSignal }))
    const sync = (stream as unknown as Iterable<StreamChunk>)[Symbol.iterator]()
    const first = sync.next()
    signal.aborted = true
    expect(first).toEqual({ done: false, value: text('one') })
    expect(() => sync.next()).toThrow('stop now')
    signal.aborted = false
    const awaited = new ScriptedModel({ respond: () => Promise.resolve('one two'), usage: false })
    const iterator = awaited.stream(options(undefined, { signal: signal as unknown as AbortSignal }))[Symbol.asyncIterator]()
    const taken = await iterator.next()
    signal.aborted = true
    const error = await iterator.next().catch((e: unknown) => e)
    expect([taken, (error as Error).message]).toEqual([{ done: false, value: text('one') }, 'stop now'])
  })

  it('a Node signal with an aborted property of its own is read through it, not through Node\'s getter', () => {
    const controller = new AbortController()
    let said = false
    Object.defineProperty(controller.signal, 'aborted', { get: () => said })
    const stream = new ScriptedModel({ script: ['one two'], usage: false }).stream(options(undefined, { signal: controller.signal }))
    const sync = (stream as unknown as Iterable<StreamChunk>)[Symbol.iterator]()
    const first = sync.next()
    said = true
    expect(first).toEqual({ done: false, value: text('one') })
    expect(() => sync.next()).toThrow()
  })

  it('pulls made before an asynchronous responder answers are answered in order', async () => {
    let answer!: (reply: string) => void
    const model = new ScriptedModel({ respond: () => new Promise<string>((resolve) => (answer = resolve)), usage: false })
    const iterator = model.stream(options())[Symbol.asyncIterator]()
    const pulls = [iterator.next(), iterator.next(), iterator.next(), iterator.next()]
    answer('a b')
    expect(await Promise.all(pulls)).toEqual([
      { done: false, value: text('a') },
      { done: false, value: text(' b') },
      { done: false, value: stop },
      done,
    ])
  })

  it('an asynchronous responder that rejects fails the first pull', async () => {
    const model = new ScriptedModel({ respond: () => Promise.reject(new Error('responder down')) })
    expect(await drain(model.stream(options()))).toEqual({ chunks: [], error: new Error('responder down') })
  })

  it('with chunkDelayMs, return() during the delay settles the pending pull as done', async () => {
    const model = new ScriptedModel({ script: ['one two'], chunkDelayMs: 1, usage: false })
    const iterator = model.stream(options())[Symbol.asyncIterator]()
    const pending = iterator.next()
    await iterator.return!()
    expect(await pending).toEqual(done)
  })

  it('a reply at hand without delay is also a synchronous Iterable (the in-memory fast path of dsh-llm); a delayed or awaited one is not', async () => {
    const instant = new ScriptedModel({ script: ['a b'], usage: false }).stream(options())
    const delayed = new ScriptedModel({ script: ['a'], chunkDelayMs: 1 }).stream(options())
    const awaited = new ScriptedModel({ respond: () => Promise.resolve('a') }).stream(options())
    const isIterable = (value: object) => typeof (value as Partial<Iterable<unknown>>)[Symbol.iterator] === 'function'
    expect([isIterable(instant), isIterable(delayed), isIterable(awaited)]).toEqual([true, false, false])
    const iterator = (instant as unknown as Iterable<StreamChunk>)[Symbol.iterator]()
    expect([iterator.next(), iterator.return!(), iterator.next()]).toEqual([{ done: false, value: text('a') }, done, done])
  })

  it('the two views of an instant reply are one stream: what one takes the other does not see, and return() on either ends both', async () => {
    const stream = new ScriptedModel({ script: ['a b c'], usage: false }).stream(options()) as AsyncIterable<StreamChunk> & Iterable<StreamChunk>
    const sync = stream[Symbol.iterator]()
    const async = stream[Symbol.asyncIterator]()
    const first = [sync.next(), await async.next(), await async.return!(), sync.next()]
    expect(first).toEqual([{ done: false, value: text('a') }, { done: false, value: text(' b') }, done, done])
  })

  it('an instant reply that has ended stays ended: an abort after its last chunk is no error on either view', async () => {
    const controller = new AbortController()
    const stream = new ScriptedModel({ script: ['a'], usage: false }).stream(options(undefined, { signal: controller.signal })) as AsyncIterable<StreamChunk> & Iterable<StreamChunk>
    const sync = stream[Symbol.iterator]()
    const taken = [sync.next(), sync.next(), sync.next()]
    expect(taken.map((result) => result.done)).toEqual([false, false, true])
    controller.abort()
    expect(sync.next()).toEqual(done)
    expect(await stream[Symbol.asyncIterator]().next()).toEqual(done)
  })

  it('through ctx.llm, an abort between chunks of an instant reply ends the call at once', async () => {
    const controller = new AbortController()
    const root = await mounted(new ScriptedModel({ script: ['one two three'] }))
    const seen: StreamChunk[] = []
    for await (const chunk of root.llm.stream(options(undefined, { signal: controller.signal }))) {
      seen.push(chunk)
      controller.abort()
    }
    expect(seen).toEqual([text('one'), { type: 'finish', reason: { kind: 'aborted' } }])
  })

  it('counts the input for the usage estimate when the call starts, not when the usage chunk is pulled', async () => {
    const model = new ScriptedModel({ script: ['ok'] })
    const history: Message[] = [createUserMessage('12345678')]
    const iterator = model.stream(options(history))[Symbol.asyncIterator]()
    const first = await iterator.next()
    history.push(createUserMessage('a much longer message that arrived later'))
    expect([first, await iterator.next()]).toEqual([
      { done: false, value: text('ok') },
      { done: false, value: { type: 'usage', usage: { inputTokens: 2, outputTokens: 1 } } },
    ])
  })
})

describe('plugin', () => {
  it('fills its config defaults', () => {
    expect(Config({})).toEqual({
      provider: 'scripted',
      script: [],
      demo: false,
      chunkDelayMs: 0,
      textChunking: 'word',
      argumentChunkSize: 8,
      models: [],
      record: true,
      usage: true,
    })
  })

  it('registers a scripted model under the configured provider for the life of the plugin', async () => {
    const root = new Context()
    await root.plugin(LlmService)
    const fiber = root.plugin(ScriptedPlugin, { provider: 'offline', script: ['hi there'], usage: false, models: [{ id: 'm', reasoningEfforts: ['low'] }] })
    await fiber
    expect(root.llm.providers()).toEqual(['offline'])
    expect(await collect(root.llm.stream({ provider: 'offline', model: 'm', reasoningEffort: 'low', messages: [] }))).toEqual([
      { type: 'text-delta', index: 0, text: 'hi' },
      { type: 'text-delta', index: 0, text: ' there' },
      stop,
    ])
    await fiber.dispose()
    expect(root.llm.providers()).toEqual([])
  })

  it('fails to start with INVALID_SCRIPT for a bad script, and registers nothing', async () => {
    const root = new Context()
    await root.plugin(LlmService)
    const fiber = root.plugin(ScriptedPlugin, { script: [{ txt: 'typo' } as never] })
    await expect(fiber).rejects.toMatchObject({ code: 'INVALID_SCRIPT', message: 'script[0] has an unknown field "txt"' })
    expect(root.llm.providers()).toEqual([])
  })

  it('refuses a bad config value', async () => {
    expect(() => Config({ chunkDelayMs: -5 })).toThrow()
    expect(() => Config({ textChunking: 'line' as never })).toThrow()
  })

  it('answers with the demo responder when demo is on', async () => {
    const root = new Context()
    await root.plugin(LlmService)
    await root.plugin(ScriptedPlugin, { demo: true })
    const reply = assemble(await collect(root.llm.stream({ provider: 'scripted', model: 'demo', messages: [createUserMessage('hello')] })))
    expect(reply.finishReason).toEqual({ kind: 'stop' })
    expect(reply.content).toEqual([
      { type: 'text', text: 'I am the offline demo model (no network, no API key). You said: "hello". Ask me about the files in this workspace and I will look with the tools.' },
    ])
  })
})
