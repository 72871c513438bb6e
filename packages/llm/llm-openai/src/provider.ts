import {
  imageMediaType,
  apiKeyCharacterProblem,
  codePointLabel,
  deepFreeze,
  definedFields as given,
  HTTP_HEADER_NAME,
  headerValueProblem,
  parseBaseUrl,
  type JsonObject,
} from '@deepseek-ai/dsh-llm'
import type { ImageLimits, MaxTokensParam, ModelConfig, PresetName, ProviderConfig } from './config'
import { presets } from './presets'

/**
 * Defaults for the fields a provider (or its preset) leaves out.
 *
 * The two deadlines differ on purpose. Response headers come as soon as the
 * provider accepts the request (DeepSeek and OpenAI send them before the
 * first token, then keep the stream alive), so a server that sends none in 30
 * seconds is down or unreachable; with dsh-llm-retry's one `TIMEOUT` retry a
 * dead server fails a turn in about a minute. A silent body is different: a
 * reasoning model may think for minutes before its first token, so the idle
 * deadline stays at two minutes (five for the OpenAI preset, whose reasoning
 * models send nothing while they think).
 */
export const providerDefaults = {
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 120_000,
  maxTokensParam: 'max_tokens',
  streamUsage: true,
} as const

/**
 * A provider configuration with its preset applied, defaults filled and every
 * field checked. Deep-frozen.
 */
export interface ResolvedProvider {
  readonly name: string
  /** Without a trailing slash. */
  readonly baseUrl: string
  readonly apiKey?: string
  readonly apiKeyEnv?: string
  readonly defaultModel?: string
  readonly models: Readonly<Record<string, Readonly<ModelConfig>>>
  readonly requestTimeoutMs: number
  readonly idleTimeoutMs: number
  readonly headers: Readonly<Record<string, string>>
  /** Only the limits given (preset, then own); an absent one is not enforced. */
  readonly images: Readonly<ImageLimits>
  readonly maxTokensParam: MaxTokensParam
  readonly streamUsage: boolean
  readonly extraBody: Readonly<JsonObject>
}

/** A provider configuration that cannot work, found when the adapter is built (never at call time). */
export class OpenAiConfigError extends Error {
  override readonly name = 'OpenAiConfigError'
  readonly code = 'INVALID_PROVIDER_CONFIG'
}

const presetNames = Object.keys(presets) as PresetName[]

function isPresetName(value: unknown): value is PresetName {
  return typeof value === 'string' && (presetNames as string[]).includes(value)
}

/**
 * Why `key` cannot be sent as an API key, or `undefined` when it can. A key
 * goes into an HTTP header, which carries only Latin-1, and real keys are
 * printable ASCII: anything else is a paste accident (a typographic dash or
 * quote, a space, a line break in the middle). The answer names the position
 * and the code point of the first bad character, never the key.
 */
export function apiKeyProblem(key: string): string | undefined {
  const bad = apiKeyCharacterProblem(key)
  if (bad === undefined) return undefined
  const what = {
    space: 'a space',
    'line-break': 'a line break',
    'non-ascii': `the non-ASCII character ${codePointLabel(bad.codePoint)}`,
    control: `the control character ${codePointLabel(bad.codePoint)}`,
  }[bad.kind]
  return `contains ${what} at position ${bad.position}; API keys are printable ASCII, so it was probably pasted with a typographic dash or quote, or with a stray space or line break`
}

/**
 * Checks an API key before it is used: throws `OpenAiConfigError` (code
 * `INVALID_PROVIDER_CONFIG`) naming `source` when the key cannot be sent (see
 * `apiKeyProblem`). The message never contains the key. Leading and trailing
 * whitespace is not a problem: the adapter trims it, as `fetch` would.
 */
export function checkApiKey(key: string, source: string): void {
  const problem = apiKeyProblem(key.trim())
  if (problem !== undefined) throw new OpenAiConfigError(`the API key in ${source} ${problem}`)
}

function positive(value: unknown, field: string, where: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new OpenAiConfigError(`${where}: ${field} must be a positive number of milliseconds, got ${JSON.stringify(value)}`)
  }
  return value
}

const imageFields = ['maxImages', 'maxImageBytes', 'maxTotalBytes'] as const

/** `images` with its undefined fields dropped, every field checked (a positive integer). */
function imageLimits(images: ImageLimits | undefined, field: string, where: string): ImageLimits {
  if (images === undefined) return {}
  if (images === null || typeof images !== 'object') throw new OpenAiConfigError(`${where}: ${field} must be an object of limits`)
  const out: ImageLimits = {}
  for (const key of imageFields) {
    const value = images[key]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
      throw new OpenAiConfigError(`${where}: ${field}.${key} must be a positive integer, got ${JSON.stringify(value)}`)
    }
    out[key] = value
  }
  const types = images.mediaTypes
  if (types !== undefined) {
    if (!Array.isArray(types) || types.some((t) => typeof t !== 'string' || !t)) {
      throw new OpenAiConfigError(`${where}: ${field}.mediaTypes must be a list of media types such as "image/png"`)
    }
    out.mediaTypes = types.map(imageMediaType)
  }
  if (out.maxImageBytes !== undefined && out.maxTotalBytes !== undefined && out.maxImageBytes > out.maxTotalBytes) {
    throw new OpenAiConfigError(
      `${where}: ${field}.maxImageBytes (${out.maxImageBytes}) must not exceed ${field}.maxTotalBytes (${out.maxTotalBytes}): one image must fit in a request`,
    )
  }
  return out
}

function mergeModels(
  base: Readonly<Record<string, Readonly<ModelConfig>>> | undefined,
  own: Record<string, ModelConfig> | undefined,
  where: string,
): Record<string, ModelConfig> {
  const out: Record<string, ModelConfig> = {}
  for (const [id, caps] of Object.entries(base ?? {})) out[id] = { ...caps }
  for (const [id, caps] of Object.entries(own ?? {})) {
    if (caps === null || typeof caps !== 'object') {
      throw new OpenAiConfigError(`${where}: models.${id} must be an object of capabilities`)
    }
    const images = out[id]?.images && caps.images ? { ...out[id].images, ...given(caps.images) } : undefined
    out[id] = { ...out[id], ...given(caps), ...(images ? { images } : {}) }
  }
  for (const [id, caps] of Object.entries(out)) {
    const efforts = caps.reasoningEfforts
    if (efforts !== undefined && (!Array.isArray(efforts) || efforts.some((e) => typeof e !== 'string' || !e))) {
      throw new OpenAiConfigError(`${where}: models.${id}.reasoningEfforts must be a list of non-empty strings`)
    }
    const effort = caps.defaultReasoningEffort
    if (effort !== undefined && !efforts?.includes(effort)) {
      throw new OpenAiConfigError(
        `${where}: models.${id}.defaultReasoningEffort "${effort}" is not one of its reasoningEfforts (${efforts?.length ? efforts.join(', ') : 'none declared'})`,
      )
    }
  }
  return out
}

/**
 * Applies a provider's preset and the defaults, and checks the result. Throws
 * `OpenAiConfigError` (code `INVALID_PROVIDER_CONFIG`) naming the field to fix.
 * Never reads the API key's environment variable: that happens at each call,
 * so a key exported after startup is picked up.
 */
export function resolveProvider(input: ProviderConfig | PresetName): ResolvedProvider {
  const own: ProviderConfig = typeof input === 'string' ? { preset: input } : given(input ?? {})
  if (typeof input === 'string' && !isPresetName(input)) {
    throw new OpenAiConfigError(`unknown provider preset "${input}"; the presets are ${presetNames.join(', ')}`)
  }
  if (own.preset !== undefined && !isPresetName(own.preset)) {
    throw new OpenAiConfigError(`unknown provider preset "${own.preset}"; the presets are ${presetNames.join(', ')}`)
  }
  const preset: ProviderConfig = own.preset ? presets[own.preset] : {}
  const merged = { ...providerDefaults, ...preset, ...own }
  const name = merged.name
  if (typeof name !== 'string' || !name) {
    throw new OpenAiConfigError('a provider needs a name (or a preset that gives one)')
  }
  const where = `provider "${name}"`
  const url = parseBaseUrl(merged.baseUrl)
  if (!url.ok && url.problem === 'not-http') {
    throw new OpenAiConfigError(`${where}: baseUrl must be an http(s) URL such as https://api.deepseek.com, got ${JSON.stringify(url.given)}`)
  }
  if (!url.ok) {
    throw new OpenAiConfigError(
      `${where}: baseUrl ${url.shown} carries a user name or password; give the URL without them and the key with apiKey or apiKeyEnv (other credentials with headers)`,
    )
  }
  const { baseUrl } = url
  for (const field of ['apiKey', 'apiKeyEnv', 'defaultModel'] as const) {
    const value = merged[field]
    if (value !== undefined && typeof value !== 'string') {
      throw new OpenAiConfigError(`${where}: ${field} must be a string`)
    }
  }
  const apiKey = merged.apiKey?.trim()
  if (apiKey) {
    const problem = apiKeyProblem(apiKey)
    if (problem !== undefined) throw new OpenAiConfigError(`${where}: apiKey ${problem}`)
  }
  if (merged.maxTokensParam !== 'max_tokens' && merged.maxTokensParam !== 'max_completion_tokens') {
    throw new OpenAiConfigError(`${where}: maxTokensParam must be "max_tokens" or "max_completion_tokens"`)
  }
  const headers: Record<string, string> = {}
  for (const [key, value] of Object.entries({ ...preset.headers, ...own.headers })) {
    if (!HTTP_HEADER_NAME.test(key)) throw new OpenAiConfigError(`${where}: ${JSON.stringify(key)} is not a valid HTTP header name`)
    if (typeof value !== 'string') throw new OpenAiConfigError(`${where}: header ${key} must be a string`)
    // The value is not quoted: it may be a credential.
    const problem = headerValueProblem(value)
    if (problem !== undefined) throw new OpenAiConfigError(`${where}: the value of header ${key} ${problem}`)
    headers[key] = value
  }
  const models = mergeModels(preset.models, own.models, where)
  const images = imageLimits({ ...imageLimits(preset.images, 'images', where), ...imageLimits(own.images, 'images', where) }, 'images', where)
  for (const [id, caps] of Object.entries(models)) {
    if (caps.images === undefined) continue
    caps.images = imageLimits(caps.images, `models.${id}.images`, where)
    imageLimits({ ...images, ...caps.images }, `models.${id}.images`, where)
  }
  // Cloned before freezing so the caller's own config objects stay mutable.
  return deepFreeze(structuredClone({
    name,
    baseUrl,
    ...(apiKey ? { apiKey } : {}),
    ...(merged.apiKeyEnv ? { apiKeyEnv: merged.apiKeyEnv } : {}),
    ...(merged.defaultModel ? { defaultModel: merged.defaultModel } : {}),
    models,
    requestTimeoutMs: positive(merged.requestTimeoutMs, 'requestTimeoutMs', where),
    idleTimeoutMs: positive(merged.idleTimeoutMs, 'idleTimeoutMs', where),
    headers,
    images,
    maxTokensParam: merged.maxTokensParam,
    streamUsage: merged.streamUsage !== false,
    extraBody: { ...preset.extraBody, ...own.extraBody },
  }))
}
