import Schema from 'schemastery'
import type { JsonObject } from '@deepseek-ai/dsh-llm'

/**
 * The images one request may carry. The Messages API refuses the whole
 * request when any of these is exceeded, and since a session's history only
 * grows, it would refuse every later request too; the adapter sends a short
 * text note in place of each image it leaves out instead (see `ImageBudget`).
 * Sizes are counted in base64 characters, as the API counts them.
 */
export interface ImageLimits {
  /** Images per request (the API's limit: 100, or 600 for models with a 1M-token window). */
  maxImages?: number
  /** Base64 characters of one image (the API refuses an image over 5 MB). */
  maxImageBytes?: number
  /** Base64 characters of all the images of a request (the API refuses a request over 32 MB; the rest is left for text). */
  maxTotalBytes?: number
  /** Pixels on either side of one image (the API refuses an image over 8000 px). */
  maxSide?: number
  /** Over this many images in one request, `manySide` applies instead of `maxSide`. */
  manyImages?: number
  /** Pixels on either side of one image in a request with more than `manyImages` images (the API's limit: 2000 px). */
  manySide?: number
  /**
   * The image formats the provider takes, as media types (the API's: JPEG,
   * PNG, GIF, WebP); an image whose data is another format goes as a note.
   * Empty: the provider takes no images (DeepSeek's endpoint).
   */
  mediaTypes?: string[]
}

/** The names of the built-in provider presets. */
export type PresetName = 'anthropic' | 'deepseek-anthropic'

/**
 * How a model is asked to think:
 *
 * - `adaptive`: `thinking: { type: 'adaptive' }`, and the call's reasoning
 *   effort as `output_config.effort` (Claude 4.6 and later).
 * - `budget`: `thinking: { type: 'enabled', budget_tokens }`, the budget taken
 *   from `thinkingBudgets` by the call's effort (Claude Haiku 4.5 and older
 *   models); no effort, no thinking.
 * - `effort`: no `thinking` field, the effort alone as `output_config.effort`
 *   (DeepSeek's Anthropic-compatible endpoint).
 */
export type ThinkingMode = 'adaptive' | 'budget' | 'effort'

/**
 * What the adapter knows about one model of a provider. Every field is
 * optional: a model that is not configured still works (with the provider's
 * `defaultMaxTokens`), it just reports no capabilities and accepts no
 * reasoning effort through `ctx.llm`.
 */
export interface ModelConfig {
  /** Context window in tokens (prompt plus output). */
  contextWindow?: number
  /** The largest `max_tokens` the model accepts; a larger request is clamped to it. */
  maxOutputTokens?: number
  /** The efforts the model accepts (`low`, `medium`, `high`, `max`). */
  reasoningEfforts?: string[]
  /** The effort `ctx.llm` fills in when a call names none. Must be one of `reasoningEfforts`. */
  defaultReasoningEffort?: string
  /** How the effort reaches the API (see `ThinkingMode`); without it the effort is not sent. */
  thinking?: ThinkingMode
  /** For `thinking: 'budget'`: the thinking tokens of each effort. */
  thinkingBudgets?: Record<string, number>
  /** Image limits of this model's requests; each field given overrides the provider's. */
  images?: ImageLimits
  /** Extra top-level body fields for this model; they override the provider's. */
  extraBody?: JsonObject
}

/**
 * One Anthropic Messages API endpoint. With `preset`, every field defaults to
 * the preset's value and the fields given here override it (`models` merge per
 * model and per field). Without a preset, `name` and `baseUrl` are required.
 */
export interface ProviderConfig {
  /** Start from a built-in preset (`anthropic`, `deepseek-anthropic`). */
  preset?: PresetName
  /** The provider name calls use (`GenerateOptions.provider`). Defaults to the preset name. */
  name?: string
  /** The API root; the adapter posts to `<baseUrl>/v1/messages`. */
  baseUrl?: string
  /** The API key itself, sent as `x-api-key`. Prefer `apiKeyEnv`, which keeps the key out of config files. */
  apiKey?: string
  /** The name of an environment variable holding the API key, read at each call. */
  apiKeyEnv?: string
  /** The model used when a call names none (an empty `model`). */
  defaultModel?: string
  /** Capabilities per model id. */
  models?: Record<string, ModelConfig>
  /** `max_tokens` when a call sets no `maxTokens` (the API requires one); clamped to the model's `maxOutputTokens`. */
  defaultMaxTokens?: number
  /**
   * Place `cache_control` breakpoints (tools, system, the last message and
   * the end of the previous step's request). On by default; off for servers
   * that cache prefixes by themselves (DeepSeek) or refuse the field.
   */
  cacheBreakpoints?: boolean
  /** The `anthropic-version` header. */
  apiVersion?: string
  /** Milliseconds to wait for the response headers before failing with `TIMEOUT`. */
  requestTimeoutMs?: number
  /** Milliseconds the response body may stay silent (a `ping` counts) before failing with `TIMEOUT`. */
  idleTimeoutMs?: number
  /**
   * The images a request may carry (count, bytes, pixels). Each field left
   * out is the Messages API's documented limit (`imageLimitDefaults`); images
   * past them are left out of the request with a note (see `ImageBudget`).
   */
  images?: ImageLimits
  /** Extra HTTP headers sent with every request (e.g. `anthropic-beta`). */
  headers?: Record<string, string>
  /** Extra top-level body fields for every request of this provider. */
  extraBody?: JsonObject
}

/** The plugin's configuration: the providers to register on `ctx.llm`, each by its name. */
export interface AnthropicConfig {
  /** A preset name alone (`'anthropic'`) is short for `{ preset: 'anthropic' }`. */
  providers: Array<ProviderConfig | PresetName>
}

const presetSchema = Schema.union(['anthropic', 'deepseek-anthropic'] as const)

/**
 * Schemastery fills an absent list with `[]` and an absent object with `{}`.
 * A field the user left out must stay out: a model override of one field
 * would otherwise replace the preset model's efforts, budgets, images and
 * extra body with empty ones, and `mediaTypes: []` means "takes no images".
 */
const NONE = undefined as never

export const ImageLimits: Schema<ImageLimits> = Schema.object({
  maxImages: Schema.natural().min(1).description('Images per request.'),
  maxImageBytes: Schema.natural().min(1).description('Base64 characters of one image.'),
  maxTotalBytes: Schema.natural().min(1).description('Base64 characters of all the images of a request.'),
  maxSide: Schema.natural().min(1).description('Pixels per side of one image.'),
  manyImages: Schema.natural().description('Over this many images, manySide applies.'),
  manySide: Schema.natural().min(1).description('Pixels per side of one image in a request with more than manyImages images.'),
  mediaTypes: Schema.array(Schema.string()).default(NONE).description('Image formats the provider takes; empty for none.'),
}) as Schema<ImageLimits>

export const ModelConfig: Schema<ModelConfig> = Schema.object({
  contextWindow: Schema.natural().description('Context window in tokens.'),
  maxOutputTokens: Schema.natural().description('Largest accepted max_tokens.'),
  reasoningEfforts: Schema.array(Schema.string()).default(NONE).description('Accepted efforts.'),
  defaultReasoningEffort: Schema.string().description('Effort used when a call names none.'),
  thinking: Schema.union(['adaptive', 'budget', 'effort'] as const).description('How the effort is sent.'),
  thinkingBudgets: Schema.dict(Schema.natural()).default(NONE).description('Thinking tokens per effort (thinking: budget).'),
  images: ImageLimits.default(NONE).description('Image limits of this model (override the provider).'),
  extraBody: Schema.dict(Schema.any()).default(NONE).description('Extra request body fields for this model.'),
}) as Schema<ModelConfig>

export const ProviderConfig: Schema<ProviderConfig> = Schema.object({
  preset: presetSchema.description('Start from a built-in preset.'),
  name: Schema.string().description('Provider name used by calls; defaults to the preset name.'),
  baseUrl: Schema.string().role('link').description('API root; requests go to `<baseUrl>/v1/messages`.'),
  apiKey: Schema.string().role('secret').description('API key (prefer `apiKeyEnv`).'),
  apiKeyEnv: Schema.string().description('Environment variable that holds the API key.'),
  defaultModel: Schema.string().description('Model used when a call names none.'),
  models: Schema.dict(ModelConfig).description('Capabilities per model id.'),
  defaultMaxTokens: Schema.natural().description('max_tokens when a call sets none.'),
  cacheBreakpoints: Schema.boolean().description('Place cache_control breakpoints on the stable prefix.'),
  apiVersion: Schema.string().description('The anthropic-version header.'),
  requestTimeoutMs: Schema.natural().description('Timeout for the response headers, in milliseconds.'),
  idleTimeoutMs: Schema.natural().description('Timeout for a silent response body, in milliseconds.'),
  images: ImageLimits.description('Images a request may carry; beyond them, a note replaces each image left out.'),
  headers: Schema.dict(Schema.string()).description('Extra HTTP headers.'),
  extraBody: Schema.dict(Schema.any()).description('Extra request body fields.'),
}) as Schema<ProviderConfig>

export const AnthropicConfig: Schema<AnthropicConfig> = Schema.object({
  providers: Schema.array(Schema.union([presetSchema, ProviderConfig]))
    .default([])
    .description('Anthropic Messages API providers to register on `ctx.llm`.'),
}) as Schema<AnthropicConfig>
