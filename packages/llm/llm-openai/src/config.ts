import Schema from 'schemastery'
import type { JsonObject } from '@deepseek-ai/dsh-llm'

/**
 * The images one request may carry; a limit left out is not enforced. A
 * provider refuses the whole request when one is exceeded, and since a
 * session's history only grows it would refuse every later request too; the
 * adapter sends a short text note in place of each image it leaves out
 * instead (see `ImageBudget`). Sizes are counted in base64 characters.
 */
export interface ImageLimits {
  /** Images per request (OpenAI: 500). */
  maxImages?: number
  /** Base64 characters of one image (OpenAI: 20 MB). */
  maxImageBytes?: number
  /** Base64 characters of all the images of a request (OpenAI: 50 MB). */
  maxTotalBytes?: number
  /**
   * The media types the provider takes (OpenAI: PNG, JPEG, GIF, WebP); an image
   * of another declared type is replaced by a note. Compared in lower case,
   * `image/jpg` as `image/jpeg`. Absent: every type is sent. Empty: the
   * provider takes no images (DeepSeek), and every image is sent as a note.
   */
  mediaTypes?: string[]
}

/** The names of the built-in provider presets. */
export type PresetName = 'deepseek' | 'openai'

/** Which body field carries the output limit: older servers know `max_tokens`, OpenAI's reasoning models only `max_completion_tokens`. */
export type MaxTokensParam = 'max_tokens' | 'max_completion_tokens'

/**
 * What the adapter knows about one model of a provider. Every field is
 * optional: a model that is not configured still works, it just reports no
 * capabilities (`resolveModel` returns only its id) and accepts no reasoning
 * effort through `ctx.llm`.
 */
export interface ModelConfig {
  /** Context window in tokens (prompt plus output). */
  contextWindow?: number
  /** The largest `maxTokens` the model accepts. */
  maxOutputTokens?: number
  /** The values the model accepts as `reasoning_effort`; absent or empty means the field is never meaningful. */
  reasoningEfforts?: string[]
  /** The effort `ctx.llm` fills in when a call names none. Must be one of `reasoningEfforts`. */
  defaultReasoningEffort?: string
  /**
   * Send earlier reasoning back as `reasoning_content` on assistant messages.
   * DeepSeek's thinking-mode models require it for turns that called tools
   * (and ignore it otherwise); other providers reject or ignore the field.
   * An assistant message without reasoning (from a model that did not think)
   * goes with it empty: DeepSeek refuses the request when it is missing.
   * Default `false`: reasoning stays in the session log but is not sent.
   */
  replayReasoning?: boolean
  /** Image limits of this model's requests; each field given overrides the provider's. */
  images?: ImageLimits
  /** Extra top-level body fields for this model (e.g. `{ thinking: { type: 'disabled' } }`); they override the provider's. */
  extraBody?: JsonObject
}

/**
 * One OpenAI-compatible endpoint. With `preset`, every field defaults to the
 * preset's value and the fields given here override it (`models` merge per
 * model and per field). Without a preset, `name` and `baseUrl` are required.
 */
export interface ProviderConfig {
  /** Start from a built-in preset (`deepseek`, `openai`). */
  preset?: PresetName
  /** The provider name calls use (`GenerateOptions.provider`). Defaults to the preset name. */
  name?: string
  /** The API root; the adapter posts to `<baseUrl>/chat/completions`. */
  baseUrl?: string
  /** The API key itself. Prefer `apiKeyEnv`, which keeps the key out of config files. */
  apiKey?: string
  /** The name of an environment variable holding the API key, read at each call. */
  apiKeyEnv?: string
  /** The model used when a call names none (an empty `model`). */
  defaultModel?: string
  /** Capabilities per model id. */
  models?: Record<string, ModelConfig>
  /** Milliseconds to wait for the response headers before failing with `TIMEOUT`. */
  requestTimeoutMs?: number
  /** Milliseconds the response body may stay silent (no byte, keep-alive comments count) before failing with `TIMEOUT`. */
  idleTimeoutMs?: number
  /**
   * The images a request may carry. The OpenAI preset sets OpenAI's limits;
   * other servers have their own (vLLM's `--limit-mm-per-prompt`, for one), so
   * without a preset nothing is enforced until this is set.
   */
  images?: ImageLimits
  /** Extra HTTP headers sent with every request (e.g. `OpenAI-Organization`). */
  headers?: Record<string, string>
  /** The body field for `maxTokens`. */
  maxTokensParam?: MaxTokensParam
  /** Send `stream_options: { include_usage: true }` so the stream ends with token usage. Turn off for servers that reject it. */
  streamUsage?: boolean
  /** Extra top-level body fields for every request of this provider. */
  extraBody?: JsonObject
}

/** The plugin's configuration: the providers to register on `ctx.llm`, each by its name. */
export interface OpenAiConfig {
  /** A preset name alone (`'deepseek'`) is short for `{ preset: 'deepseek' }`. */
  providers: Array<ProviderConfig | PresetName>
}

const presetSchema = Schema.union(['deepseek', 'openai'] as const)

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
  mediaTypes: Schema.array(Schema.string()).default(NONE).description('Media types the provider takes.'),
}) as Schema<ImageLimits>

export const ModelConfig: Schema<ModelConfig> = Schema.object({
  contextWindow: Schema.natural().description('Context window in tokens.'),
  maxOutputTokens: Schema.natural().description('Largest accepted output limit in tokens.'),
  reasoningEfforts: Schema.array(Schema.string()).default(NONE).description('Accepted `reasoning_effort` values.'),
  defaultReasoningEffort: Schema.string().description('Effort used when a call names none.'),
  replayReasoning: Schema.boolean().description('Send earlier reasoning back as `reasoning_content`.'),
  images: ImageLimits.default(NONE).description('Image limits of this model (override the provider).'),
  extraBody: Schema.dict(Schema.any()).default(NONE).description('Extra request body fields for this model.'),
}) as Schema<ModelConfig>

export const ProviderConfig: Schema<ProviderConfig> = Schema.object({
  preset: presetSchema.description('Start from a built-in preset.'),
  name: Schema.string().description('Provider name used by calls; defaults to the preset name.'),
  baseUrl: Schema.string().role('link').description('API root; requests go to `<baseUrl>/chat/completions`.'),
  apiKey: Schema.string().role('secret').description('API key (prefer `apiKeyEnv`).'),
  apiKeyEnv: Schema.string().description('Environment variable that holds the API key.'),
  defaultModel: Schema.string().description('Model used when a call names none.'),
  models: Schema.dict(ModelConfig).description('Capabilities per model id.'),
  requestTimeoutMs: Schema.natural().description('Timeout for the response headers, in milliseconds.'),
  idleTimeoutMs: Schema.natural().description('Timeout for a silent response body, in milliseconds.'),
  images: ImageLimits.description('Images a request may carry; beyond them, a note replaces each image left out.'),
  headers: Schema.dict(Schema.string()).description('Extra HTTP headers.'),
  maxTokensParam: Schema.union(['max_tokens', 'max_completion_tokens'] as const).description('Body field for the output limit.'),
  streamUsage: Schema.boolean().description('Ask for token usage at the end of the stream.'),
  extraBody: Schema.dict(Schema.any()).description('Extra request body fields.'),
}) as Schema<ProviderConfig>

export const OpenAiConfig: Schema<OpenAiConfig> = Schema.object({
  providers: Schema.array(Schema.union([presetSchema, ProviderConfig]))
    .default([])
    .description('OpenAI-compatible providers to register on `ctx.llm`.'),
}) as Schema<OpenAiConfig>
