import { deepFreeze } from '@deepseek-ai/dsh-llm'
import type { PresetName, ProviderConfig } from './config'

/**
 * The built-in provider presets. Capabilities are the providers' published
 * limits when this package was released; override any of them per model in
 * the provider's `models` (the fields merge).
 *
 * DeepSeek: its API takes no images, so each is sent as a note. `deepseek-chat` and `deepseek-reasoner` are the API's non-thinking
 * and thinking aliases. Its thinking mode wants earlier reasoning sent back for
 * turns that called tools (and ignores it for other turns), so the thinking
 * models replay reasoning. The V4 ids take a `reasoning_effort` of `high` or
 * `max`.
 *
 * OpenAI: its reasoning models reject `max_tokens`, so the preset sends
 * `max_completion_tokens`; the reasoning models accept `reasoning_effort`.
 * Its image limits are the vision guide's (counted here in base64
 * characters, which are more than the image's bytes: a margin).
 */
export const presets: Readonly<Record<PresetName, Readonly<ProviderConfig>>> = deepFreeze({
  deepseek: {
    name: 'deepseek',
    baseUrl: 'https://api.deepseek.com',
    apiKeyEnv: 'DEEPSEEK_API_KEY',
    defaultModel: 'deepseek-chat',
    maxTokensParam: 'max_tokens',
    // Its chat completions take text parts only (`unknown variant \`image_url\`, expected \`text\``): every image goes as a note.
    images: { mediaTypes: [] },
    models: {
      'deepseek-chat': { contextWindow: 131_072, maxOutputTokens: 8_192 },
      'deepseek-reasoner': { contextWindow: 131_072, maxOutputTokens: 65_536, replayReasoning: true },
      'deepseek-v4-flash': {
        contextWindow: 1_048_576,
        maxOutputTokens: 393_216,
        reasoningEfforts: ['high', 'max'],
        defaultReasoningEffort: 'high',
        replayReasoning: true,
      },
      'deepseek-v4-pro': {
        contextWindow: 1_048_576,
        maxOutputTokens: 393_216,
        reasoningEfforts: ['high', 'max'],
        defaultReasoningEffort: 'high',
        replayReasoning: true,
      },
    },
  },
  openai: {
    name: 'openai',
    baseUrl: 'https://api.openai.com/v1',
    apiKeyEnv: 'OPENAI_API_KEY',
    defaultModel: 'gpt-4.1',
    maxTokensParam: 'max_completion_tokens',
    idleTimeoutMs: 300_000,
    // The vision guide's image input requirements: PNG, JPEG, GIF, WebP; 500 images, 50 MB of images per request, 20 MB each.
    images: { maxImages: 500, maxImageBytes: 20_000_000, maxTotalBytes: 50_000_000, mediaTypes: ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] },
    models: {
      'gpt-4.1': { contextWindow: 1_047_576, maxOutputTokens: 32_768 },
      'gpt-4.1-mini': { contextWindow: 1_047_576, maxOutputTokens: 32_768 },
      'gpt-4o': { contextWindow: 128_000, maxOutputTokens: 16_384 },
      'gpt-4o-mini': { contextWindow: 128_000, maxOutputTokens: 16_384 },
      'o4-mini': {
        contextWindow: 200_000,
        maxOutputTokens: 100_000,
        reasoningEfforts: ['low', 'medium', 'high'],
        defaultReasoningEffort: 'medium',
      },
      'gpt-5': {
        contextWindow: 400_000,
        maxOutputTokens: 128_000,
        reasoningEfforts: ['minimal', 'low', 'medium', 'high'],
        defaultReasoningEffort: 'medium',
      },
      'gpt-5-mini': {
        contextWindow: 400_000,
        maxOutputTokens: 128_000,
        reasoningEfforts: ['minimal', 'low', 'medium', 'high'],
        defaultReasoningEffort: 'medium',
      },
    },
  },
})
