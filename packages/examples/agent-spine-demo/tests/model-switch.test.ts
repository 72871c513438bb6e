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
    plugin: async (plugin: { name?: string }, config: { providers?: { name: string }[]; provider?: string }) => {
      mounted.push(config.providers ? `openai:${config.providers.map((p) => p.name).join(',')}` : `scripted:${config.provider}`)
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
})
