import Llm from '@deepseek-ai/dsh-llm'
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { AnthropicAdapter, AnthropicConfigError, AnthropicProviders, presets, resolveProvider } from '../src'

describe('presets and configuration', () => {
  it('the anthropic preset: endpoint, key variable, default model, the current models with windows, limits and efforts, breakpoints on', () => {
    const resolved = resolveProvider('anthropic')
    expect({ ...resolved, models: Object.keys(resolved.models) }).toEqual({
      name: 'anthropic',
      baseUrl: 'https://api.anthropic.com',
      apiKeyEnv: 'ANTHROPIC_API_KEY',
      defaultModel: 'claude-sonnet-5-5',
      models: ['claude-fable-5-1', 'claude-opus-5-5', 'claude-sonnet-5-5', 'claude-haiku-5-5', 'claude-opus-5', 'claude-sonnet-5', 'claude-haiku-4-5'],
      defaultMaxTokens: 32_000,
      cacheBreakpoints: true,
      apiVersion: '2023-06-01',
      requestTimeoutMs: 60_000,
      idleTimeoutMs: 120_000,
      images: {
        mediaTypes: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'],
        maxImages: 100,
        maxImageBytes: 5_242_880,
        maxTotalBytes: 25_165_824,
        maxSide: 8_000,
        manyImages: 20,
        manySide: 2_000,
      },
      headers: {},
      extraBody: {},
    })
    const adapter = new AnthropicAdapter('anthropic', { env: {} })
    expect([adapter.resolveModel('claude-opus-5-5'), adapter.resolveModel('claude-haiku-4-5'), adapter.resolveModel('')]).toEqual([
      { id: 'claude-opus-5-5', contextWindow: 1_000_000, maxOutputTokens: 128_000, reasoningEfforts: ['low', 'medium', 'high', 'max'], defaultReasoningEffort: 'medium' },
      { id: 'claude-haiku-4-5', contextWindow: 200_000, maxOutputTokens: 64_000, reasoningEfforts: ['low', 'medium', 'high'] },
      { id: 'claude-sonnet-5-5', contextWindow: 1_000_000, maxOutputTokens: 128_000, reasoningEfforts: ['low', 'medium', 'high', 'max'], defaultReasoningEffort: 'high' },
    ])
  })

  it('the DeepSeek preset points at its Anthropic-compatible endpoint, sends no breakpoints, and takes the effort alone', () => {
    const resolved = resolveProvider({ preset: 'deepseek-anthropic', models: { 'deepseek-v4-pro': { maxOutputTokens: 8192 } } })
    expect({ name: resolved.name, baseUrl: resolved.baseUrl, apiKeyEnv: resolved.apiKeyEnv, defaultModel: resolved.defaultModel, cache: resolved.cacheBreakpoints }).toEqual({
      name: 'deepseek-anthropic',
      baseUrl: 'https://api.deepseek.com/anthropic',
      apiKeyEnv: 'DEEPSEEK_API_KEY',
      defaultModel: 'deepseek-v4-flash',
      cache: false,
    })
    // Fields merge per model: the override keeps the preset's other capabilities.
    expect(resolved.models['deepseek-v4-pro']).toEqual({ ...presets['deepseek-anthropic'].models!['deepseek-v4-pro'], maxOutputTokens: 8192 })
  })

  it('refuses what cannot work, naming the field and never the key', () => {
    const refusals = [
      () => resolveProvider({ name: 'x' }),
      () => resolveProvider({ preset: 'claude' as never }),
      () => resolveProvider({ name: 'x', baseUrl: 'https://user:pw@example.com' }),
      () => resolveProvider({ name: 'x', baseUrl: 'https://example.com', apiKey: 'sk-ant-a b' }),
      () => resolveProvider({ preset: 'anthropic', models: { m: { reasoningEfforts: ['low'], defaultReasoningEffort: 'high' } } }),
      () => resolveProvider({ preset: 'anthropic', models: { m: { reasoningEfforts: ['low'], thinking: 'budget' } } }),
      () => resolveProvider({ preset: 'anthropic', headers: { 'x-secret': 'a\nb' } }),
    ]
    const messages = refusals.map((refuse) => {
      try {
        refuse()
        return 'no error'
      } catch (error) {
        expect(error).toBeInstanceOf(AnthropicConfigError)
        return (error as AnthropicConfigError).message
      }
    })
    expect(messages).toEqual([
      'provider "x": baseUrl must be an http(s) URL such as https://api.anthropic.com',
      'unknown provider preset "claude"; the presets are anthropic, deepseek-anthropic',
      'provider "x": baseUrl carries a user name or password; give the URL without them and the key with apiKey or apiKeyEnv',
      'provider "x": apiKey contains a space at position 9; API keys are printable ASCII, so it was probably pasted with a stray character',
      'provider "anthropic": models.m.defaultReasoningEffort "high" is not one of its reasoningEfforts (low)',
      'provider "anthropic": models.m.thinkingBudgets.low must be an integer of at least 1024 tokens (the API\'s minimum)',
      'provider "anthropic": the value of header x-secret must be a string an HTTP header can carry (Latin-1, no line break)',
    ])
  })
})

describe('the plugin', () => {
  it('registers each provider on ctx.llm under its name, reverts on dispose, and refuses two providers of one name', async () => {
    const root = new Context()
    await root.plugin(Llm)
    const fiber = root.plugin(AnthropicProviders, { providers: ['anthropic', { preset: 'deepseek-anthropic', name: 'ds' }] })
    await fiber
    const prepared = () => Promise.all(['anthropic', 'ds'].map(async (provider) => (await root.llm.prepareCall({ provider, model: 'm' })).hasAdapter))
    expect(await prepared()).toEqual([true, true])
    await fiber.dispose()
    expect(await prepared()).toEqual([false, false])
    expect(() => new AnthropicProviders(root as never, { providers: ['anthropic', 'anthropic'] })).toThrow('two providers are named "anthropic"; give one of them another name')
  })
})
