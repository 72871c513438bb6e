import { expectTypeOf, test } from 'vitest'
import type { LlmAdapter } from '@deepseek-ai/dsh-llm'
import AnthropicProviders, { AnthropicAdapter, type PresetName, type ProviderConfig } from '../src'

test('the adapter is an LlmAdapter and the plugin is the default export', () => {
  expectTypeOf<AnthropicAdapter>().toMatchTypeOf<LlmAdapter>()
  expectTypeOf(AnthropicProviders.inject).toEqualTypeOf<string[]>()
  expectTypeOf<PresetName>().toEqualTypeOf<'anthropic' | 'deepseek-anthropic'>()
  // @ts-expect-error thinking takes only the documented modes
  const bad: ProviderConfig = { models: { m: { thinking: 'always' } } }
  void bad
})
