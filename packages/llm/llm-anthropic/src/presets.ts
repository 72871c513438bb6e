import { deepFreeze } from '@deepseek-ai/dsh-llm'
import type { ModelConfig, PresetName, ProviderConfig } from './config'

const efforts = ['low', 'medium', 'high', 'max']

/**
 * A current Claude model: 1M-token window, 128K output, adaptive thinking
 * driven by the effort, and 600 images per request (the vision guide: 600 per
 * API request, 100 for models with a 200k-token window).
 */
const adaptive = (defaultReasoningEffort: string): ModelConfig => ({
  contextWindow: 1_000_000,
  maxOutputTokens: 128_000,
  reasoningEfforts: efforts,
  defaultReasoningEffort,
  thinking: 'adaptive',
  images: { maxImages: 600 },
})

/** A DeepSeek V4 model behind the Anthropic-compatible endpoint: the effort goes as `output_config.effort`. */
const deepseek: ModelConfig = {
  contextWindow: 1_048_576,
  maxOutputTokens: 393_216,
  reasoningEfforts: ['high', 'max'],
  defaultReasoningEffort: 'high',
  thinking: 'effort',
}

/**
 * The built-in provider presets. Capabilities are the providers' published
 * limits when this package was written (late 2026); override any of them per
 * model in the provider's `models` (the fields merge). A call may name a model
 * that is not listed: it is sent as is, without limits or an effort.
 *
 * Anthropic: ids, limits and default efforts as Anthropic's documentation
 * lists them (the models overview, each model's page, and the effort page's
 * supported models): the current lineup (Fable 5.1, Opus 5.5, Sonnet 5.5,
 * Haiku 5.5) and the legacy models still served (Opus 5, Sonnet 5, Haiku 4.5). Every
 * current model thinks adaptively, steered by the effort; Haiku 4.5 takes a
 * thinking budget, and thinks only when a call asks for an effort.
 *
 * DeepSeek: its Anthropic-compatible endpoint caches prefixes by itself and
 * ignores `cache_control`, so the preset sends no breakpoints.
 */
export const presets: Readonly<Record<PresetName, Readonly<ProviderConfig>>> = deepFreeze({
  anthropic: {
    name: 'anthropic',
    baseUrl: 'https://api.anthropic.com',
    apiKeyEnv: 'ANTHROPIC_API_KEY',
    defaultModel: 'claude-sonnet-5-5',
    models: {
      'claude-fable-5-1': adaptive('high'),
      'claude-opus-5-5': adaptive('medium'),
      'claude-sonnet-5-5': adaptive('high'),
      'claude-haiku-5-5': adaptive('medium'),
      'claude-opus-5': adaptive('high'),
      'claude-sonnet-5': adaptive('high'),
      'claude-haiku-4-5': {
        contextWindow: 200_000,
        maxOutputTokens: 64_000,
        reasoningEfforts: ['low', 'medium', 'high'],
        thinking: 'budget',
        thinkingBudgets: { low: 2_048, medium: 8_192, high: 24_576 },
      },
    },
  },
  'deepseek-anthropic': {
    name: 'deepseek-anthropic',
    baseUrl: 'https://api.deepseek.com/anthropic',
    apiKeyEnv: 'DEEPSEEK_API_KEY',
    defaultModel: 'deepseek-v4-flash',
    cacheBreakpoints: false,
    // Its endpoint refuses image blocks (`unknown variant \`image\``): every image goes as a note.
    images: { mediaTypes: [] },
    models: {
      'deepseek-v4-flash': deepseek,
      'deepseek-v4-pro': deepseek,
    },
  },
})
