import { deepFreeze, type JsonObject } from '@deepseek-ai/dsh-llm'
import type { MaxTokensParam, ModelConfig, PresetName, ProviderConfig } from './config'
import { presets } from './presets'

/** Defaults for the fields a provider (or its preset) leaves out. */
export const providerDefaults = {
  requestTimeoutMs: 120_000,
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

/** Drops `undefined` and `null` fields, so that only what the user wrote overrides a preset. */
function given<T extends object>(value: T): Partial<T> {
  const out: Partial<T> = {}
  for (const key of Object.keys(value) as (keyof T)[]) {
    if (value[key] !== undefined && value[key] !== null) out[key] = value[key]
  }
  return out
}

function positive(value: unknown, field: string, where: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new OpenAiConfigError(`${where}: ${field} must be a positive number of milliseconds, got ${JSON.stringify(value)}`)
  }
  return value
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
    out[id] = { ...out[id], ...given(caps) }
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
  let baseUrl: string
  try {
    const url = new URL(String(merged.baseUrl ?? ''))
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http')
    baseUrl = url.href.replace(/\/+$/, '')
  } catch {
    throw new OpenAiConfigError(`${where}: baseUrl must be an http(s) URL such as https://api.deepseek.com, got ${JSON.stringify(merged.baseUrl ?? null)}`)
  }
  for (const field of ['apiKey', 'apiKeyEnv', 'defaultModel'] as const) {
    const value = merged[field]
    if (value !== undefined && typeof value !== 'string') {
      throw new OpenAiConfigError(`${where}: ${field} must be a string`)
    }
  }
  if (merged.maxTokensParam !== 'max_tokens' && merged.maxTokensParam !== 'max_completion_tokens') {
    throw new OpenAiConfigError(`${where}: maxTokensParam must be "max_tokens" or "max_completion_tokens"`)
  }
  const headers: Record<string, string> = {}
  for (const [key, value] of Object.entries({ ...preset.headers, ...own.headers })) {
    if (typeof value !== 'string') throw new OpenAiConfigError(`${where}: header ${key} must be a string`)
    headers[key] = value
  }
  // Cloned before freezing so the caller's own config objects stay mutable.
  return deepFreeze(structuredClone({
    name,
    baseUrl,
    ...(merged.apiKey ? { apiKey: merged.apiKey } : {}),
    ...(merged.apiKeyEnv ? { apiKeyEnv: merged.apiKeyEnv } : {}),
    ...(merged.defaultModel ? { defaultModel: merged.defaultModel } : {}),
    models: mergeModels(preset.models, own.models, where),
    requestTimeoutMs: positive(merged.requestTimeoutMs, 'requestTimeoutMs', where),
    idleTimeoutMs: positive(merged.idleTimeoutMs, 'idleTimeoutMs', where),
    headers,
    maxTokensParam: merged.maxTokensParam,
    streamUsage: merged.streamUsage !== false,
    extraBody: { ...preset.extraBody, ...own.extraBody },
  }))
}
