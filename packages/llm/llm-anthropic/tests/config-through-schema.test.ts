import { describe, expect, it } from 'vitest'
import { AnthropicConfig, presets, resolveProvider, type ProviderConfig } from '../src'

/** A provider config as the plugin receives it: validated by its Cordis schema first. */
function throughSchema(provider: ProviderConfig): ProviderConfig {
  return AnthropicConfig({ providers: [provider] }).providers[0] as ProviderConfig
}

describe('a config validated by the plugin schema resolves as the same config given directly', () => {
  it('the Anthropic preset keeps its image formats', () => {
    const resolved = resolveProvider(throughSchema({ preset: 'anthropic' }))
    expect(resolved.images).toEqual(resolveProvider({ preset: 'anthropic' }).images)
    expect(resolved.images.mediaTypes).toEqual(expect.arrayContaining(['image/png', 'image/jpeg']))
  })

  it("a model override of one field keeps the preset model's efforts and thinking budgets", () => {
    const given: ProviderConfig = { preset: 'anthropic', models: { 'claude-haiku-4-5': { maxOutputTokens: 4_096 } } }
    const model = resolveProvider(throughSchema(given)).models['claude-haiku-4-5']
    expect(model).toEqual(resolveProvider(given).models['claude-haiku-4-5'])
    expect(model?.thinkingBudgets).toEqual(presets.anthropic.models!['claude-haiku-4-5']!.thinkingBudgets)
    expect(model?.reasoningEfforts).toEqual(['low', 'medium', 'high'])
  })

  it('an empty list given on purpose still means the provider takes no images', () => {
    expect(resolveProvider(throughSchema({ preset: 'anthropic', images: { mediaTypes: [] } })).images.mediaTypes).toEqual([])
  })

  it('media types are compared as the providers read them: image/jpg is image/jpeg, in any case, parameters dropped', () => {
    expect(resolveProvider({ preset: 'anthropic', images: { mediaTypes: ['Image/JPG', 'image/png; charset=binary'] } }).images.mediaTypes).toEqual(['image/jpeg', 'image/png'])
  })
})
