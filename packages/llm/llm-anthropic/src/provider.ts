import { apiKeyCharacterProblem, imageMediaType, codePointLabel, deepFreeze, definedFields as given, HTTP_HEADER_NAME, headerValueProblem, parseBaseUrl, type JsonObject } from '@deepseek-ai/dsh-llm'
import type { ImageLimits, ModelConfig, PresetName, ProviderConfig, ThinkingMode } from './config'
import { imageLimitDefaults } from './image-budget'
import { presets } from './presets'

/**
 * Defaults for the fields a provider (or its preset) leaves out. The API
 * requires `max_tokens`; 32,000 leaves room for thinking on every current
 * model without asking for more than the smallest one (Haiku 4.5) can give.
 * Anthropic sends `ping` events while a model thinks, so a body silent for
 * two minutes means a dead connection.
 */
export const providerDefaults = {
  defaultMaxTokens: 32_000,
  cacheBreakpoints: true,
  apiVersion: '2023-06-01',
  requestTimeoutMs: 60_000,
  idleTimeoutMs: 120_000,
} as const

/** A provider configuration with its preset applied, defaults filled and every field checked. Deep-frozen. */
export interface ResolvedProvider {
  readonly name: string
  /** Without a trailing slash. */
  readonly baseUrl: string
  readonly apiKey?: string
  readonly apiKeyEnv?: string
  readonly defaultModel?: string
  readonly models: Readonly<Record<string, Readonly<ModelConfig>>>
  readonly defaultMaxTokens: number
  readonly cacheBreakpoints: boolean
  readonly images: Readonly<Required<ImageLimits>>
  readonly apiVersion: string
  readonly requestTimeoutMs: number
  readonly idleTimeoutMs: number
  readonly headers: Readonly<Record<string, string>>
  readonly extraBody: Readonly<JsonObject>
}

/** A provider configuration that cannot work, found when the adapter is built (never at call time). */
export class AnthropicConfigError extends Error {
  override readonly name = 'AnthropicConfigError'
  readonly code = 'INVALID_PROVIDER_CONFIG'
}

const presetNames = Object.keys(presets) as PresetName[]
const thinkingModes: readonly ThinkingMode[] = ['adaptive', 'budget', 'effort']

/**
 * Why `key` cannot be sent as an API key, or `undefined` when it can: keys
 * are printable ASCII, anything else is a paste accident. The answer names
 * the position of the first bad character, never the key.
 */
export function apiKeyProblem(key: string): string | undefined {
  const bad = apiKeyCharacterProblem(key)
  if (bad === undefined) return undefined
  // The UTF-16 unit at that position, as this adapter has always named it.
  const what = bad.kind === 'space' ? 'a space' : bad.kind === 'line-break' ? 'a line break' : `the character ${codePointLabel(key.charCodeAt(bad.position - 1))}`
  return `contains ${what} at position ${bad.position}; API keys are printable ASCII, so it was probably pasted with a stray character`
}

function positive(value: unknown, field: string, where: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new AnthropicConfigError(`${where}: ${field} must be a positive number, got ${JSON.stringify(value)}`)
  }
  return value
}

const imageFields = Object.keys(imageLimitDefaults) as Array<keyof ImageLimits & string>

/** `images` with its undefined fields dropped, every field checked (a positive integer; `manyImages` may be 0). */
function imageLimits(images: ImageLimits | undefined, field: string, where: string): ImageLimits {
  if (images === undefined) return {}
  if (images === null || typeof images !== 'object') throw new AnthropicConfigError(`${where}: ${field} must be an object of limits`)
  const out: ImageLimits = {}
  const types = images.mediaTypes
  if (types !== undefined) {
    if (!Array.isArray(types) || types.some((t) => typeof t !== 'string' || !t)) {
      throw new AnthropicConfigError(`${where}: ${field}.mediaTypes must be a list of media types such as "image/png"`)
    }
    out.mediaTypes = types.map(imageMediaType)
  }
  for (const key of imageFields) {
    if (key === 'mediaTypes') continue
    const value = images[key]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isInteger(value) || value < (key === 'manyImages' ? 0 : 1)) {
      throw new AnthropicConfigError(`${where}: ${field}.${key} must be a ${key === 'manyImages' ? 'non-negative' : 'positive'} integer, got ${JSON.stringify(value)}`)
    }
    out[key] = value
  }
  return out
}

function fits(images: Required<ImageLimits>, field: string, where: string): Required<ImageLimits> {
  if (images.maxImageBytes > images.maxTotalBytes) {
    throw new AnthropicConfigError(
      `${where}: ${field}.maxImageBytes (${images.maxImageBytes}) must not exceed ${field}.maxTotalBytes (${images.maxTotalBytes}): one image must fit in a request`,
    )
  }
  return images
}

/** The provider's image limits (defaults, preset, own), each model's over them checked too. */
function resolveImages(preset: ImageLimits | undefined, own: ImageLimits | undefined, models: Record<string, ModelConfig>, where: string): Required<ImageLimits> {
  const images = fits({ ...imageLimitDefaults, ...imageLimits(preset, 'images', where), ...imageLimits(own, 'images', where) }, 'images', where)
  for (const [id, caps] of Object.entries(models)) if (caps.images) fits({ ...images, ...caps.images }, `models.${id}.images`, where)
  return images
}

function checkModel(id: string, caps: ModelConfig, where: string): void {
  if (caps.images !== undefined) caps.images = imageLimits(caps.images, `models.${id}.images`, where)
  const efforts = caps.reasoningEfforts
  if (efforts !== undefined && (!Array.isArray(efforts) || efforts.some((e) => typeof e !== 'string' || !e))) {
    throw new AnthropicConfigError(`${where}: models.${id}.reasoningEfforts must be a list of non-empty strings`)
  }
  if (caps.defaultReasoningEffort !== undefined && !efforts?.includes(caps.defaultReasoningEffort)) {
    throw new AnthropicConfigError(
      `${where}: models.${id}.defaultReasoningEffort "${caps.defaultReasoningEffort}" is not one of its reasoningEfforts (${efforts?.length ? efforts.join(', ') : 'none declared'})`,
    )
  }
  if (caps.thinking !== undefined && !thinkingModes.includes(caps.thinking)) {
    throw new AnthropicConfigError(`${where}: models.${id}.thinking must be one of ${thinkingModes.join(', ')}`)
  }
  if (caps.thinking === 'budget') {
    for (const effort of efforts ?? []) {
      const budget = caps.thinkingBudgets?.[effort]
      if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1_024) {
        throw new AnthropicConfigError(`${where}: models.${id}.thinkingBudgets.${effort} must be an integer of at least 1024 tokens (the API's minimum)`)
      }
    }
  }
}

function mergeModels(base: ProviderConfig['models'], own: ProviderConfig['models'], where: string): Record<string, ModelConfig> {
  const out: Record<string, ModelConfig> = {}
  for (const [id, caps] of Object.entries(base ?? {})) out[id] = { ...caps }
  for (const [id, caps] of Object.entries(own ?? {})) {
    if (caps === null || typeof caps !== 'object') throw new AnthropicConfigError(`${where}: models.${id} must be an object of capabilities`)
    const images = out[id]?.images && caps.images ? { ...out[id].images, ...given(caps.images) } : undefined
    out[id] = { ...out[id], ...given(caps), ...(images ? { images } : {}) }
  }
  for (const [id, caps] of Object.entries(out)) checkModel(id, caps, where)
  return out
}

/**
 * Applies a provider's preset and the defaults, and checks the result. Throws
 * `AnthropicConfigError` (code `INVALID_PROVIDER_CONFIG`) naming the field to
 * fix. Never reads the API key's environment variable: that happens at each
 * call, so a key exported after startup is picked up.
 */
export function resolveProvider(input: ProviderConfig | PresetName): ResolvedProvider {
  const own: ProviderConfig = typeof input === 'string' ? { preset: input } : given(input ?? {})
  if (own.preset !== undefined && !presetNames.includes(own.preset)) {
    throw new AnthropicConfigError(`unknown provider preset "${own.preset}"; the presets are ${presetNames.join(', ')}`)
  }
  const preset: ProviderConfig = own.preset ? presets[own.preset] : {}
  const merged = { ...providerDefaults, ...preset, ...own }
  const name = merged.name
  if (typeof name !== 'string' || !name) throw new AnthropicConfigError('a provider needs a name (or a preset that gives one)')
  const where = `provider "${name}"`
  const url = parseBaseUrl(merged.baseUrl)
  if (!url.ok && url.problem === 'not-http') throw new AnthropicConfigError(`${where}: baseUrl must be an http(s) URL such as https://api.anthropic.com`)
  if (!url.ok) {
    throw new AnthropicConfigError(`${where}: baseUrl carries a user name or password; give the URL without them and the key with apiKey or apiKeyEnv`)
  }
  for (const field of ['apiKey', 'apiKeyEnv', 'defaultModel', 'apiVersion'] as const) {
    if (merged[field] !== undefined && typeof merged[field] !== 'string') throw new AnthropicConfigError(`${where}: ${field} must be a string`)
  }
  const apiKey = merged.apiKey?.trim()
  const keyProblem = apiKey ? apiKeyProblem(apiKey) : undefined
  if (keyProblem) throw new AnthropicConfigError(`${where}: apiKey ${keyProblem}`)
  const headers: Record<string, string> = {}
  for (const [key, value] of Object.entries({ ...preset.headers, ...own.headers })) {
    if (!HTTP_HEADER_NAME.test(key)) throw new AnthropicConfigError(`${where}: ${JSON.stringify(key)} is not a valid HTTP header name`)
    // The value is never quoted: it may be a credential.
    if (typeof value !== 'string' || headerValueProblem(value) !== undefined) {
      throw new AnthropicConfigError(`${where}: the value of header ${key} must be a string an HTTP header can carry (Latin-1, no line break)`)
    }
    headers[key] = value
  }
  const models = mergeModels(preset.models, own.models, where)
  return deepFreeze(
    structuredClone({
      name,
      baseUrl: url.baseUrl,
      ...(apiKey ? { apiKey } : {}),
      ...(merged.apiKeyEnv ? { apiKeyEnv: merged.apiKeyEnv } : {}),
      ...(merged.defaultModel ? { defaultModel: merged.defaultModel } : {}),
      models,
      defaultMaxTokens: positive(merged.defaultMaxTokens, 'defaultMaxTokens', where),
      cacheBreakpoints: merged.cacheBreakpoints !== false,
      images: resolveImages(preset.images, own.images, models, where),
      apiVersion: merged.apiVersion,
      requestTimeoutMs: positive(merged.requestTimeoutMs, 'requestTimeoutMs', where),
      idleTimeoutMs: positive(merged.idleTimeoutMs, 'idleTimeoutMs', where),
      headers,
      extraBody: { ...preset.extraBody, ...own.extraBody },
    }),
  )
}
