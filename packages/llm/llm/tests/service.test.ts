import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { LlmError, type LlmAdapter } from '@deepseek-ai/dsh-llm'
import { collect, deferred, fakeAdapter, hello, mountLlm, stop } from './helpers'

const efforts = { id: 'm', reasoningEfforts: ['low', 'medium', 'high'], defaultReasoningEffort: 'medium' }

async function rejection(promise: Promise<unknown>): Promise<LlmError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(LlmError)
  return error as LlmError
}

describe('registerAdapter (R-LLM-1)', () => {
  it('reverts the registration with the caller fiber', async () => {
    const root = await mountLlm()
    const fiber = root.plugin({
      inject: ['llm'],
      apply: (ctx: Context) => void ctx.llm.registerAdapter(['p', 'q'], fakeAdapter([stop])),
    })
    await fiber
    expect(root.llm.providers()).toEqual(['p', 'q'])
    await fiber.dispose()
    expect(root.llm.providers()).toEqual([])
    expect((await root.llm.prepareCall({ provider: 'p', model: 'm' })).hasAdapter).toBe(false)
  })

  it('stacks registrations of one provider: the newest wins, disposing it uncovers the previous one', async () => {
    const root = await mountLlm()
    const older = fakeAdapter([{ type: 'text-delta', index: 0, text: 'old' }, stop])
    const newer = fakeAdapter([{ type: 'text-delta', index: 0, text: 'new' }, stop])
    root.llm.registerAdapter(['p'], older)
    const fiber = root.plugin({ inject: ['llm'], apply: (ctx: Context) => void ctx.llm.registerAdapter(['p'], newer) })
    await fiber
    await collect(root.llm.stream({ provider: 'p', model: 'm', messages: [] }))
    await fiber.dispose()
    await collect(root.llm.stream({ provider: 'p', model: 'm', messages: [] }))
    expect([older.calls.length, newer.calls.length]).toEqual([1, 1])
  })

  it('the returned function reverts early and is idempotent', async () => {
    const root = await mountLlm()
    const dispose = root.llm.registerAdapter(['p'], fakeAdapter([stop]))
    dispose()
    dispose()
    expect(root.llm.providers()).toEqual([])
  })

  it('refuses bad input with INVALID_CONFIG and registers nothing', async () => {
    const root = await mountLlm()
    const bad: Array<[unknown, unknown]> = [
      [[], fakeAdapter([stop])],
      [['p', ''], fakeAdapter([stop])],
      ['p', fakeAdapter([stop])],
      [['p'], {}],
      [['p'], null],
      [['p'], { stream: () => [], resolveModel: 'x' }],
    ]
    for (const [providers, adapter] of bad) {
      let error: unknown
      try {
        root.llm.registerAdapter(providers as string[], adapter as LlmAdapter)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(LlmError)
      expect((error as LlmError).code).toBe('INVALID_CONFIG')
    }
    expect(root.llm.providers()).toEqual([])
  })
})

describe('prepareCall', () => {
  it('requires provider and model', async () => {
    const root = await mountLlm()
    const cases = [
      {},
      { provider: 'p' },
      { model: 'm' },
      { provider: '', model: 'm' },
      { provider: 'p', model: 'm', maxTokens: 0 },
      { provider: 'p', model: 'm', maxTokens: 1.5 },
      { provider: 'p', model: 'm', temperature: Number.NaN },
      { provider: 'p', model: 'm', reasoningEffort: '' },
    ]
    for (const config of cases) {
      expect((await rejection(root.llm.prepareCall(config))).code).toBe('INVALID_CONFIG')
    }
    expect((await rejection(root.llm.prepareCall(null as never))).code).toBe('INVALID_CONFIG')
  })

  it('names the missing field in the message', async () => {
    const root = await mountLlm()
    expect((await rejection(root.llm.prepareCall({ model: 'm' }))).message).toMatch(/no provider/)
    expect((await rejection(root.llm.prepareCall({ provider: 'p' }))).message).toMatch(/no model/)
  })

  it('rejects ABORTED when the signal is already aborted, without asking the adapter', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([stop], efforts)
    root.llm.registerAdapter(['p'], adapter)
    const error = await rejection(root.llm.prepareCall({ provider: 'p', model: 'm' }, AbortSignal.abort()))
    expect(error.code).toBe('ABORTED')
    expect(adapter.resolveCount).toBe(0)
  })

  it('rejects ABORTED as soon as the signal aborts while resolveModel is pending', async () => {
    const root = await mountLlm()
    const never = deferred<never>()
    root.llm.registerAdapter(['p'], { stream: fakeAdapter([stop]).stream, resolveModel: () => never.promise })
    const controller = new AbortController()
    const pending = root.llm.prepareCall({ provider: 'p', model: 'm' }, controller.signal)
    controller.abort()
    expect((await rejection(pending)).code).toBe('ABORTED')
  })

  it('calls resolveModel once and fills the default reasoning effort', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([stop], efforts)
    root.llm.registerAdapter(['p'], adapter)
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm', maxTokens: 100, temperature: undefined })
    expect(adapter.resolveCount).toBe(1)
    expect(call.config).toEqual({ provider: 'p', model: 'm', maxTokens: 100, reasoningEffort: 'medium' })
    expect(Object.isFrozen(call.config)).toBe(true)
    expect(call.model).toEqual(efforts)
    expect(call.hasAdapter).toBe(true)
    await collect(call.stream({ messages: [] }))
    await collect(call.stream({ messages: [] }))
    expect(adapter.resolveCount).toBe(1)
  })

  it('accepts a declared reasoning effort and keeps it', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([stop], efforts))
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm', reasoningEffort: 'high' })
    expect(call.config).toEqual({ provider: 'p', model: 'm', reasoningEffort: 'high' })
  })

  it('rejects an unknown reasoning effort, listing the accepted ones', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([stop], efforts))
    const error = await rejection(root.llm.prepareCall({ provider: 'p', model: 'm', reasoningEffort: 'max' }))
    expect(error.failure).toEqual({
      code: 'INVALID_CONFIG',
      message: 'model "m" of provider "p" does not accept reasoning effort "max"; accepted: low, medium, high',
    })
  })

  it('rejects any reasoning effort for a model that declares none', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([stop], { id: 'm' }))
    const error = await rejection(root.llm.prepareCall({ provider: 'p', model: 'm', reasoningEffort: 'low' }))
    expect(error.failure).toEqual({
      code: 'INVALID_CONFIG',
      message: 'model "m" of provider "p" accepts no reasoning effort, but the call asks for "low": remove reasoningEffort',
    })
  })

  it('keeps the effort unvalidated when the adapter publishes no model info', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([stop]))
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm', reasoningEffort: 'anything' })
    expect(call.config).toEqual({ provider: 'p', model: 'm', reasoningEffort: 'anything' })
    expect(call.model).toBeUndefined()
  })

  it('classifies a resolveModel failure', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], {
      stream: fakeAdapter([stop]).stream,
      resolveModel: () => Promise.reject(Object.assign(new Error('401 from the models endpoint'), { code: 'AUTH' })),
    })
    const error = await rejection(root.llm.prepareCall({ provider: 'p', model: 'm' }))
    expect(error.failure).toEqual({ code: 'AUTH', message: '401 from the models endpoint' })
  })

  it('prepares a route with no adapter, keeping its config (R-LLM-3)', async () => {
    const root = await mountLlm()
    const call = await root.llm.prepareCall({ provider: 'nobody', model: 'm', reasoningEffort: 'high' })
    expect({ config: call.config, hasAdapter: call.hasAdapter, model: call.model }).toEqual({
      config: { provider: 'nobody', model: 'm', reasoningEffort: 'high' },
      hasAdapter: false,
      model: undefined,
    })
  })
})

describe('prepareCallNow', () => {
  it('hands out the prepared call itself when resolveModel answers synchronously, and when there is none', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([stop], efforts)
    root.llm.registerAdapter(['p'], adapter)
    root.llm.registerAdapter(['q'], fakeAdapter([stop]))
    const call = root.llm.prepareCallNow({ provider: 'p', model: 'm' })
    expect(call).not.toBeInstanceOf(Promise)
    expect(adapter.resolveCount).toBe(1)
    expect((call as Exclude<typeof call, Promise<unknown>>).config).toEqual({ provider: 'p', model: 'm', reasoningEffort: 'medium' })
    const bare = root.llm.prepareCallNow({ provider: 'q', model: 'm', reasoningEffort: 'any' })
    expect(bare).not.toBeInstanceOf(Promise)
    expect((bare as Exclude<typeof bare, Promise<unknown>>).config).toEqual({ provider: 'q', model: 'm', reasoningEffort: 'any' })
    const unrouted = root.llm.prepareCallNow({ provider: 'nobody', model: 'm' })
    expect((unrouted as Exclude<typeof unrouted, Promise<unknown>>).hasAdapter).toBe(false)
  })

  it('returns a promise when resolveModel does, settled as prepareCall settles', async () => {
    const root = await mountLlm()
    const info = deferred<typeof efforts>()
    root.llm.registerAdapter(['p'], { stream: fakeAdapter([stop]).stream, resolveModel: () => info.promise })
    const pending = root.llm.prepareCallNow({ provider: 'p', model: 'm', reasoningEffort: 'high' })
    expect(pending).toBeInstanceOf(Promise)
    info.resolve(efforts)
    expect((await pending).config).toEqual({ provider: 'p', model: 'm', reasoningEffort: 'high' })
  })

  it('throws what prepareCall would reject with, when it is found before any wait', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([stop], efforts)
    root.llm.registerAdapter(['p'], adapter)
    const thrown = (run: () => unknown): unknown => {
      try {
        run()
      } catch (error) {
        return error
      }
      return undefined
    }
    const invalid = thrown(() => root.llm.prepareCallNow({ provider: 'p' }))
    expect(invalid).toBeInstanceOf(LlmError)
    expect((invalid as LlmError).code).toBe('INVALID_CONFIG')
    const aborted = thrown(() => root.llm.prepareCallNow({ provider: 'p', model: 'm' }, AbortSignal.abort()))
    expect((aborted as LlmError).code).toBe('ABORTED')
    expect(adapter.resolveCount).toBe(0)
    const effort = thrown(() => root.llm.prepareCallNow({ provider: 'p', model: 'm', reasoningEffort: 'max' }))
    expect((effort as LlmError).message).toMatch(/model "m" of provider "p" does not accept reasoning effort "max"; accepted: low, medium, high/)
  })
})

describe('a prepared call keeps its registration (R-LLM-2)', () => {
  it('dispatches through the captured registration after it was replaced', async () => {
    const root = await mountLlm()
    const first = fakeAdapter([{ type: 'text-delta', index: 0, text: 'first' }, stop], efforts)
    const second = fakeAdapter([{ type: 'text-delta', index: 0, text: 'second' }, stop], { id: 'm' })
    root.llm.registerAdapter(['p'], first)
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
    root.llm.registerAdapter(['p'], second)
    expect(await collect(call.stream({ messages: [] }))).toEqual([{ type: 'text-delta', index: 0, text: 'first' }, stop])
    expect(first.calls.map((o) => o.reasoningEffort)).toEqual(['medium'])
    expect(second.calls).toEqual([])
    // A call prepared now sees the replacement.
    const later = await root.llm.prepareCall({ provider: 'p', model: 'm' })
    expect(await collect(later.stream({ messages: [] }))).toEqual([{ type: 'text-delta', index: 0, text: 'second' }, stop])
  })

  it('dispatches through the captured registration after its plugin was disposed (hot reload)', async () => {
    const root = await mountLlm()
    const v1 = fakeAdapter([{ type: 'text-delta', index: 0, text: 'v1' }, stop])
    const v2 = fakeAdapter([{ type: 'text-delta', index: 0, text: 'v2' }, stop])
    const plugin = (adapter: LlmAdapter) => ({ inject: ['llm'], apply: (ctx: Context) => void ctx.llm.registerAdapter(['p'], adapter) })
    const fiber1 = root.plugin(plugin(v1))
    await fiber1
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
    await fiber1.dispose()
    await root.plugin(plugin(v2))
    expect(await collect(call.stream({ messages: [] }))).toEqual([{ type: 'text-delta', index: 0, text: 'v1' }, stop])
    expect([v1.calls.length, v2.calls.length]).toEqual([1, 0])
  })

  it('a call prepared with no adapter stays unhandled even if one is registered before dispatch', async () => {
    const root = await mountLlm()
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
    const late = fakeAdapter([hello, stop])
    root.llm.registerAdapter(['p'], late)
    const chunks = await collect(call.stream({ messages: [] }))
    expect(chunks.map((c) => c.type === 'finish' && c.reason.kind === 'error' && c.reason.failure.code)).toEqual(['NO_ADAPTER'])
    expect(late.calls).toEqual([])
  })
})

describe('what the adapter receives', () => {
  it('is the effective config merged with the request, the messages array itself, nothing undefined', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([stop], efforts)
    root.llm.registerAdapter(['p'], adapter)
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm', maxTokens: 64, temperature: 0 })
    const messages: never[] = []
    const signal = new AbortController().signal
    const tools = [{ name: 't', description: 'd', parameters: { type: 'object' } }]
    await collect(call.stream({ system: 'sys', tools, messages, signal, sessionId: 's' as never }))
    expect(adapter.calls).toEqual([
      { provider: 'p', model: 'm', system: 'sys', tools, messages, reasoningEffort: 'medium', maxTokens: 64, temperature: 0, signal, sessionId: 's' },
    ])
    expect(adapter.calls[0]!.messages).toBe(messages)
    expect(Object.isFrozen(messages)).toBe(false)
  })

  it('refuses a request without a messages array with INVALID_CONFIG', async () => {
    const root = await mountLlm()
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm' })
    expect(() => call.stream({} as never)).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }))
  })
})

describe('config', () => {
  it('mounts with no options and refuses none', async () => {
    const root = new Context()
    const { LlmService } = await import('@deepseek-ai/dsh-llm')
    expect(LlmService.Config({})).toEqual({})
    await root.plugin(LlmService, {})
    expect(root.llm).toBeInstanceOf(LlmService)
  })
})

describe('isFromRoute', () => {
  it('is true only for a message the same provider/model produced', async () => {
    const { createAssistantMessage, createUserMessage, isFromRoute } = await import('@deepseek-ai/dsh-llm')
    const fromA = createAssistantMessage('x', { source: { kind: 'model', provider: 'p', model: 'a' } })
    expect([
      isFromRoute(fromA, 'p', 'a'),
      isFromRoute(fromA, 'p', 'b'),
      isFromRoute(fromA, 'q', 'a'),
      isFromRoute(createUserMessage('x'), 'p', 'a'),
    ]).toEqual([true, false, false, false])
  })
})
