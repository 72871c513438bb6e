import { AnthropicConfigError, apiKeyProblem, presets, resolveProvider, type PresetName, type ProviderConfig } from '@deepseek-ai/dsh-llm-anthropic'
import { apiKeyVariableProblem } from './api-key'
import { CliError } from './errors'
import { hasUserinfo, redactUrlUserinfo } from './redact'

/** A provider of the Anthropic Messages API (dsh-llm-anthropic): `--provider anthropic` or `deepseek-anthropic`. */
export interface AnthropicRoute {
  kind: 'anthropic'
  provider: string
  model: string
  config: ProviderConfig
  baseUrl: string
  apiKeyEnv?: string
}

/** What the route is chosen from (the fields of `RouteInput` this route reads). */
export interface AnthropicRouteInput {
  provider?: string
  baseUrl?: string
  model?: string
  apiKeyEnv?: string
}

const presetNames = Object.keys(presets) as PresetName[]

/** Whether `provider` names a dsh-llm-anthropic preset. */
export function isAnthropicPreset(provider: string | undefined): provider is PresetName {
  return provider !== undefined && (presetNames as string[]).includes(provider)
}

/** The Anthropic preset that lists `model`, if one does (so `--model claude-opus-5-5` alone works). */
export function anthropicPresetOf(model: string | undefined): PresetName | undefined {
  return model === undefined ? undefined : presetNames.find((name) => presets[name].models?.[model] !== undefined)
}

/**
 * The route of an Anthropic preset, or `undefined` when the input names none
 * (neither its provider nor, without a provider or base URL and when
 * `byModel` allows it, its model: the caller says no when an OpenAI-compatible
 * preset lists the model too, which keeps the older route). A
 * base URL (a gateway) and a key variable override the preset's. Throws
 * `INVALID_MODEL` like the OpenAI-compatible routes: a URL with a user name or
 * password, no model, or the key variable unset, blank or holding a key the
 * adapter would refuse to send (checked here, so the person learns it before
 * typing a prompt).
 */
export function anthropicRoute(input: AnthropicRouteInput, env: NodeJS.ProcessEnv, byModel: boolean): AnthropicRoute | undefined {
  const preset = isAnthropicPreset(input.provider)
    ? input.provider
    : byModel && input.provider === undefined && input.baseUrl === undefined
      ? anthropicPresetOf(input.model)
      : undefined
  if (preset === undefined) return undefined
  const config: ProviderConfig = {
    preset,
    ...(input.baseUrl !== undefined ? { baseUrl: input.baseUrl } : {}),
    ...(input.apiKeyEnv !== undefined ? { apiKeyEnv: input.apiKeyEnv } : {}),
  }
  let resolved
  try {
    resolved = resolveProvider(config)
  } catch (error) {
    if (error instanceof AnthropicConfigError) throw new CliError('INVALID_MODEL', redactUrlUserinfo(error.message))
    throw error
  }
  if (hasUserinfo(resolved.baseUrl)) {
    throw new CliError('INVALID_MODEL', `the base URL of provider "${preset}" carries a user name or password (${redactUrlUserinfo(resolved.baseUrl)}): remove it, and pass the key with --api-key-env`)
  }
  const model = input.model ?? resolved.defaultModel
  if (!model) throw new CliError('INVALID_MODEL', `provider "${preset}" has no default model: pass --model <id>`)
  const keyProblem = resolved.apiKeyEnv && resolved.apiKey === undefined ? apiKeyVariableProblem(resolved.apiKeyEnv, preset, env, apiKeyProblem) : undefined
  if (keyProblem) throw new CliError('INVALID_MODEL', keyProblem)
  return { kind: 'anthropic', provider: resolved.name, model, config, baseUrl: resolved.baseUrl, ...(resolved.apiKeyEnv ? { apiKeyEnv: resolved.apiKeyEnv } : {}) }
}

/** The credentials of an Anthropic route the command line must never print. */
export function anthropicSecrets(route: AnthropicRoute, env: NodeJS.ProcessEnv): string[] {
  // The adapter sends the key trimmed: text that echoes it holds that form.
  return route.apiKeyEnv && env[route.apiKeyEnv] ? [env[route.apiKeyEnv]!, env[route.apiKeyEnv]!.trim()] : []
}
