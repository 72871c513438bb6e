import AnthropicProviders from '@deepseek-ai/dsh-llm-anthropic'
import { describe, expect, it } from 'vitest'
import type { Context } from '../src/cordis'
import { resolveModelRoute } from '../src/cli/model-route'
import { ModelSwitch } from '../src/cli/model-switch'
import { PriceTable } from '../src/cli/prices'

/** An app context that records what the switch mounts and selects. */
function fakeApp() {
  const mounted: string[] = []
  const selected: unknown[] = []
  const ctx = {
    get: (name: string) => (name === 'agentDefaultModel' ? { select: (selection: unknown) => selected.push(selection) } : undefined),
    plugin: async (plugin: unknown, config: { providers?: { name?: string; preset?: string }[]; provider?: string }) => {
      const kind = plugin === AnthropicProviders ? 'anthropic' : 'openai'
      mounted.push(config.providers ? `${kind}:${config.providers.map((p) => p.name ?? p.preset).join(',')}` : `scripted:${config.provider}`)
    },
  } as unknown as Context
  return { ctx, mounted, selected }
}

const scripted = resolveModelRoute({ scripted: { models: [{ id: 'demo' }, { id: 'demo-large' }] } }, 'test', {})

describe('ModelSwitch', () => {
  it('switches between the offline models without mounting anything, and says what it did to the log and the cache', async () => {
    const { ctx, mounted, selected } = fakeApp()
    const models = new ModelSwitch(ctx, scripted, new PriceTable({ 'scripted/demo-large': { input: 1, output: 2 } }), {})
    expect(await models.switchTo('demo-large')).toBe(
      "model scripted/demo → scripted/demo-large ($1 in · $2 out per M tokens): from the next request on (logged as a new request header; the provider's prompt cache starts over)",
    )
    expect(await models.switchTo('scripted/demo-large')).toBe('already on scripted/demo-large')
    expect({ mounted, selected, current: models.current() }).toEqual({ mounted: [], selected: [{ provider: 'scripted', model: 'demo-large' }], current: { provider: 'scripted', model: 'demo-large' } })
    await expect(models.switchTo('demo-xl')).rejects.toThrow('no preset knows the model "demo-xl"')
    await expect(models.switchTo('scripted/demo-xl')).rejects.toThrow('the offline model has no model "demo-xl" (it has demo, demo-large; scripted.models in the config file adds more)')
  })

  it('mounts a preset provider the first time, and refuses one whose key is not set', async () => {
    const { ctx, mounted, selected } = fakeApp()
    const models = new ModelSwitch(ctx, scripted, new PriceTable(), { DEEPSEEK_API_KEY: 'sk-test' })
    expect(await models.switchTo('deepseek')).toMatch(/^model scripted\/demo → deepseek\/deepseek-chat \(\$0\.28 in · \$0\.028 cache read · \$0\.42 out per M tokens\): from the next request on/)
    await models.switchTo('deepseek-reasoner')
    await expect(models.switchTo('gpt-4.1')).rejects.toThrow('OPENAI_API_KEY is not set')
    expect({ mounted, selected }).toEqual({
      mounted: ['openai:deepseek'],
      selected: [
        { provider: 'deepseek', model: 'deepseek-chat' },
        { provider: 'deepseek', model: 'deepseek-reasoner' },
      ],
    })
    expect(models.lines().slice(0, 4)).toEqual([
      'model deepseek/deepseek-reasoner ($0.28 in · $0.028 cache read · $0.42 out per M tokens)',
      'models (/model <provider>/<model>, or any model id of a provider):',
      '  scripted/demo',
      '  scripted/demo-large',
    ])
    expect(models.lines()).toContain('* deepseek/deepseek-reasoner ($0.28 in · $0.028 cache read · $0.42 out per M tokens)')
  })

  it('can switch to every route it lists, each on its own adapter, and tells the command line of each provider it starts', async () => {
    const { ctx, mounted, selected } = fakeApp()
    const keys = { DEEPSEEK_API_KEY: 'sk-ds-0123456789', OPENAI_API_KEY: 'sk-oa-0123456789', ANTHROPIC_API_KEY: 'sk-ant-0123456789' }
    const started: string[] = []
    const models = new ModelSwitch(ctx, scripted, new PriceTable(), keys, (route) => started.push(`${route.kind}:${route.provider}`))
    const listed = models.lines().slice(2).map((line) => line.slice(2).split(' ')[0]!)
    // With every key set, nothing is noted as missing.
    expect(models.lines().filter((line) => line.includes('needs'))).toEqual([])
    // From the first (the current offline model) through every other, and back.
    const tour = [...listed.slice(1), listed[0]!]
    for (const route of tour) await models.switchTo(route)
    expect(selected.map((route) => `${(route as { provider: string }).provider}/${(route as { model: string }).model}`)).toEqual(tour)
    expect(mounted).toEqual(['openai:deepseek', 'openai:openai', 'anthropic:anthropic', 'anthropic:deepseek-anthropic'])
    expect(started).toEqual(['openai:deepseek', 'openai:openai', 'anthropic:anthropic', 'anthropic:deepseek-anthropic'])
  })

  it('takes a model named alone from the current provider when it lists it, else from the preset that does (Anthropic ones included)', async () => {
    const { ctx, selected } = fakeApp()
    const keys = { DEEPSEEK_API_KEY: 'sk-ds-0123456789', ANTHROPIC_API_KEY: 'sk-ant-0123456789' }
    const start = resolveModelRoute({ provider: 'deepseek-anthropic' }, 'test', keys)
    const models = new ModelSwitch(ctx, start, new PriceTable(), keys)
    await models.switchTo('deepseek-v4-pro')
    await models.switchTo('claude-opus-5-5')
    await models.switchTo('deepseek-reasoner')
    await models.switchTo('deepseek-v4-flash')
    expect(selected).toEqual([
      // deepseek-v4-pro is DeepSeek's OpenAI-compatible preset's too: the current provider keeps it.
      { provider: 'deepseek-anthropic', model: 'deepseek-v4-pro' },
      { provider: 'anthropic', model: 'claude-opus-5-5' },
      { provider: 'deepseek', model: 'deepseek-reasoner' },
      { provider: 'deepseek', model: 'deepseek-v4-flash' },
    ])
  })
})
