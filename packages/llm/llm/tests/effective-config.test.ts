import { describe, expect, it } from 'vitest'
import type { LlmCallConfig, PreparedCall } from '@deepseek-ai/dsh-llm'
import { collect, fakeAdapter, mountLlm, stop } from './helpers'

const efforts = { id: 'm', reasoningEfforts: ['low', 'medium', 'high'], defaultReasoningEffort: 'medium' }
const plain = { id: 'm' }

/** What a caller can observe of an effective config: its own keys in order, values, frozenness and prototype. */
function observed(config: object) {
  return {
    keys: Reflect.ownKeys(config),
    values: { ...config },
    frozen: Object.isFrozen(config),
    plain: Object.getPrototypeOf(config) === Object.prototype,
    descriptors: Object.values(Object.getOwnPropertyDescriptors(config)).map((d) => 'value' in d && d.enumerable),
  }
}

async function prepared(config: LlmCallConfig, info = plain): Promise<PreparedCall> {
  const root = await mountLlm()
  root.llm.registerAdapter(['p'], fakeAdapter([stop], info))
  return root.llm.prepareCall(config)
}

describe('the effective config of a call', () => {
  it('is a frozen plain config itself when nothing is filled in, on every call', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([stop], plain))
    const config = Object.freeze({ provider: 'p', model: 'm', maxTokens: 8 })
    const first = await root.llm.prepareCall(config)
    const second = root.llm.prepareCallNow(config) as PreparedCall
    expect([first.config === config, second.config === config]).toEqual([true, true])
    expect(observed(first.config)).toEqual({
      keys: ['provider', 'model', 'maxTokens'],
      values: { provider: 'p', model: 'm', maxTokens: 8 },
      frozen: true,
      plain: true,
      descriptors: [true, true, true],
    })
  })

  it('is a frozen plain copy, with exactly the copy’s keys, for any config that could differ from one', async () => {
    const getter = Object.freeze(Object.defineProperty({ provider: 'p', model: 'm' }, 'maxTokens', { get: () => 8, enumerable: true }))
    const withUndefined = Object.freeze({ provider: 'p', model: 'm', temperature: undefined })
    const withSymbol = Object.freeze({ provider: 'p', model: 'm', [Symbol('x')]: 1 })
    const hidden = Object.freeze(Object.defineProperty({ provider: 'p', model: 'm' }, 'maxTokens', { value: 8, enumerable: false }))
    class Config {
      provider = 'p'
      model = 'm'
    }
    const instance = Object.freeze(new Config())
    const proxy = new Proxy(Object.freeze({ provider: 'p', model: 'm' }), {})
    const unfrozen = { provider: 'p', model: 'm' }
    const cases: Array<[object, string[]]> = [
      [getter, ['provider', 'model', 'maxTokens']],
      [withUndefined, ['provider', 'model']],
      [withSymbol, ['provider', 'model']],
      [hidden, ['provider', 'model']],
      [instance, ['provider', 'model']],
      [proxy, ['provider', 'model']],
      [unfrozen, ['provider', 'model']],
    ]
    for (const [config, keys] of cases) {
      const call = await prepared(config as LlmCallConfig)
      expect(call.config === config).toBe(false)
      expect(observed(call.config)).toEqual({ keys, values: Object.fromEntries(keys.map((k) => [k, (config as Record<string, unknown>)[k]])), frozen: true, plain: true, descriptors: keys.map(() => true) })
    }
  })

  it('reads a frozen config’s accessor on every call: a value that changed is not served stale', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([stop], plain))
    let tokens = 8
    const config = Object.freeze(Object.defineProperty({ provider: 'p', model: 'm' }, 'maxTokens', { get: () => tokens, enumerable: true }))
    const first = await root.llm.prepareCall(config as LlmCallConfig)
    tokens = 16
    const second = await root.llm.prepareCall(config as LlmCallConfig)
    expect([first.config.maxTokens, second.config.maxTokens]).toEqual([8, 16])
  })

  it('fills the model’s default effort into a copy, and checks a settled config’s effort on every call', async () => {
    const root = await mountLlm()
    root.llm.registerAdapter(['p'], fakeAdapter([stop], efforts))
    root.llm.registerAdapter(['q'], fakeAdapter([stop], plain))
    const config = Object.freeze({ provider: 'p', model: 'm' })
    const call = await root.llm.prepareCall(config)
    expect([call.config === config, observed(call.config).keys, call.config.reasoningEffort, Object.isFrozen(call.config)]).toEqual([
      false,
      ['provider', 'model', 'reasoningEffort'],
      'medium',
      true,
    ])
    expect(config).toEqual({ provider: 'p', model: 'm' })
    // Accepted once by a model that declares it, refused by one that declares no effort: checked each time.
    const high = Object.freeze({ provider: 'p', model: 'm', reasoningEffort: 'high' })
    expect((await root.llm.prepareCall(high)).config).toBe(high)
    const elsewhere = Object.freeze({ provider: 'q', model: 'm', reasoningEffort: 'high' })
    for (let i = 0; i < 2; i++) expect(() => root.llm.prepareCallNow(elsewhere)).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }))
  })
})

describe('the options an adapter receives', () => {
  it('are a frozen plain object with the set fields only, in one documented order', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([stop], efforts)
    root.llm.registerAdapter(['p'], adapter)
    const call = await root.llm.prepareCall({ provider: 'p', model: 'm', maxTokens: 64, temperature: 0 })
    const signal = new AbortController().signal
    await collect(call.stream({ system: 'sys', tools: [], messages: [], signal, sessionId: 's' as never }))
    await collect(call.stream({ messages: [] }))
    expect(adapter.calls.map((options) => [Reflect.ownKeys(options), Object.isFrozen(options), Object.getPrototypeOf(options) === Object.prototype])).toEqual([
      [['provider', 'model', 'messages', 'system', 'tools', 'reasoningEffort', 'maxTokens', 'temperature', 'signal', 'sessionId'], true, true],
      [['provider', 'model', 'messages', 'reasoningEffort', 'maxTokens', 'temperature'], true, true],
    ])
  })
})
