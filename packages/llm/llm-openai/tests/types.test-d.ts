import type { LlmAdapter, ModelInfo } from '@deepseek-ai/dsh-llm'
import type { Context } from 'cordis'
import { describe, expectTypeOf, it } from 'vitest'
import OpenAiProviders, { OpenAiAdapter, type OpenAiConfig, type ProviderConfig } from '../src'

describe('public types', () => {
  it('the adapter is an LlmAdapter whose resolveModel is synchronous', () => {
    expectTypeOf<OpenAiAdapter>().toExtend<LlmAdapter>()
    expectTypeOf<OpenAiAdapter['resolveModel']>().returns.toEqualTypeOf<ModelInfo>()
  })

  it('the plugin takes the config type, with preset names as shorthand', () => {
    const ctx = {} as Context
    const plug = () => ctx.plugin(OpenAiProviders, { providers: ['deepseek', { name: 'vllm', baseUrl: 'http://127.0.0.1:8000/v1' }] })
    expectTypeOf(plug).toBeFunction()
    expectTypeOf<OpenAiConfig['providers'][number]>().toEqualTypeOf<ProviderConfig | 'deepseek' | 'openai'>()
    // @ts-expect-error: not a preset name
    ctx.plugin(OpenAiProviders, { providers: ['anthropic'] })
  })
})
