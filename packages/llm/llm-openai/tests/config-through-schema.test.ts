import { describe, expect, it } from 'vitest'
import { OpenAiConfig, presets, resolveProvider, type ProviderConfig } from '../src'

/** A provider config as the plugin receives it: validated by its Cordis schema first. */
function throughSchema(provider: ProviderConfig): ProviderConfig {
  return OpenAiConfig({ providers: [provider] }).providers[0] as ProviderConfig
}

describe('a config validated by the plugin schema resolves as the same config given directly', () => {
  it('the OpenAI preset keeps its image media types, and a custom server has none imposed', () => {
    expect(resolveProvider(throughSchema({ preset: 'openai' })).images).toEqual(resolveProvider({ preset: 'openai' }).images)
    expect(resolveProvider(throughSchema({ preset: 'openai' })).images.mediaTypes).toEqual(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])
    // A server we know nothing of (Ollama, vLLM with a vision model) gets its images: no list means no limit.
    const custom = resolveProvider(throughSchema({ name: 'local', baseUrl: 'http://127.0.0.1:11434/v1' }))
    expect(custom.images).toEqual({})
  })

  it('a model override of one field keeps the preset model\'s other capabilities', () => {
    const given: ProviderConfig = { preset: 'openai', models: { 'gpt-5': { maxOutputTokens: 4_096 } } }
    const model = resolveProvider(throughSchema(given)).models['gpt-5']
    expect(model).toEqual(resolveProvider(given).models['gpt-5'])
    expect(model?.reasoningEfforts).toEqual(presets.openai.models!['gpt-5']!.reasoningEfforts)
  })

  it('an empty list given on purpose still means the provider takes no images', () => {
    expect(resolveProvider(throughSchema({ name: 'text-only', baseUrl: 'http://127.0.0.1:8000/v1', images: { mediaTypes: [] } })).images.mediaTypes).toEqual([])
  })
})
