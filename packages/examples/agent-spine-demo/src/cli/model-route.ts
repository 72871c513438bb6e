import { apiKeyProblem, OpenAiConfigError, presets, resolveProvider, type PresetName, type ProviderConfig } from '@deepseek-ai/dsh-llm-openai'
import { Config as ScriptedConfigSchema, type ScriptedConfig } from '@deepseek-ai/dsh-llm-scripted'
import { anthropicRoute, anthropicSecrets, type AnthropicRoute } from './anthropic-route'
import { apiKeyVariableProblem } from './api-key'
import { validateFields } from './config-file'
import { CliError } from './errors'
import { hasUserinfo, redactUrlUserinfo } from './redact'

/** The scripted model's id in the demo; it accepts these reasoning efforts (each streams a one-line reasoning block). */
export const DEMO_MODEL = 'demo'
const DEMO_EFFORTS = ['low', 'medium', 'high']

/**
 * The longest delay a Node timer waits (2^31 - 1 ms, about 24.8 days). A
 * longer one is not refused by Node: it prints an overflow warning and waits
 * 1 ms, so the command line refuses it instead.
 */
export const MAX_TIMER_MS = 2_147_483_647

/** Which adapter answers, under which provider/model pair. */
export type ModelRoute =
  | { kind: 'scripted'; provider: string; model: string; scripted: ScriptedConfig }
  | { kind: 'openai'; provider: string; model: string; config: ProviderConfig; baseUrl: string; apiKeyEnv?: string }
  | AnthropicRoute

/** What the route is chosen from: flags over file fields, already merged by the caller. */
export interface RouteInput {
  provider?: string
  baseUrl?: string
  model?: string
  apiKeyEnv?: string
  /** The spine's `defaultModel`, used when none of the three above is given. */
  defaultModel?: { provider?: string; model?: string }
  chunkDelayMs?: number
  scripted?: Record<string, unknown>
  openai?: ProviderConfig
}

/**
 * Chooses the model route. With no provider, base URL or model anywhere, it is
 * the offline scripted model (`scripted` / `demo`, with the demo responder).
 * Otherwise it is an OpenAI-compatible provider: a preset (`deepseek`,
 * `openai`) by name, any other name with a base URL, `custom` for a base URL
 * without a name, or, for a model alone, the preset that lists that model.
 *
 * Throws `INVALID_MODEL` when the route cannot work: an unknown provider
 * without a base URL, a base URL with a user name or password (never quoted),
 * a model no preset knows, no model at all, or an API key
 * variable that is unset, blank or holds a key the adapter would refuse to
 * send (checked here so the person learns it in one line before anything
 * starts, not from the first prompt's failure). `where` prefixes config-file problems.
 */
export function resolveModelRoute(input: RouteInput, where: string, env: NodeJS.ProcessEnv = process.env): ModelRoute {
  let { provider, model } = input
  const { baseUrl } = input
  if (provider === undefined && baseUrl === undefined && model === undefined) {
    provider = input.defaultModel?.provider
    model = input.defaultModel?.model
  }
  if ((provider === undefined && baseUrl === undefined && model === undefined) || provider === 'scripted') {
    if (baseUrl !== undefined) throw new CliError('INVALID_MODEL', 'a base URL has no meaning for the scripted model; pass --provider <name> with --base-url')
    const scripted = validateFields(
      ScriptedConfigSchema,
      {
        demo: true,
        models: [{ id: DEMO_MODEL, reasoningEfforts: DEMO_EFFORTS }],
        ...input.scripted,
        ...(input.chunkDelayMs !== undefined ? { chunkDelayMs: input.chunkDelayMs } : {}),
      },
      where,
      'scripted.',
    )
    if (scripted.chunkDelayMs > MAX_TIMER_MS) {
      throw new CliError('INVALID_CONFIG', `${where}: field "scripted.chunkDelayMs": ${scripted.chunkDelayMs} is out of range (0 to ${MAX_TIMER_MS} ms, the longest delay a timer can wait)`)
    }
    return { kind: 'scripted', provider: scripted.provider, model: model ?? DEMO_MODEL, scripted }
  }

  // An Anthropic Messages API preset (dsh-llm-anthropic), by provider name or by a model it lists.
  const openAiModel = model !== undefined && presetNames().some((preset) => presets[preset].models?.[model] !== undefined)
  const anthropic = anthropicRoute({ provider, baseUrl, model, apiKeyEnv: input.apiKeyEnv }, env, !openAiModel)
  if (anthropic) return anthropic
  const name = provider ?? (baseUrl !== undefined ? 'custom' : presetOf(model!))
  const preset = isPreset(name) ? name : undefined
  const config: ProviderConfig = {
    ...input.openai,
    name,
    ...(preset ? { preset } : {}),
    ...(baseUrl !== undefined ? { baseUrl } : {}),
    ...(input.apiKeyEnv !== undefined ? { apiKeyEnv: input.apiKeyEnv } : {}),
  }
  if (!preset && config.baseUrl === undefined) {
    throw new CliError(
      'INVALID_MODEL',
      `provider "${name}" is neither scripted nor a preset (${presetNames().join(', ')}): give the base URL of its OpenAI-compatible API (--base-url or baseUrl in the config file)`,
    )
  }
  let resolved
  try {
    resolved = resolveProvider(config)
  } catch (error) {
    // The adapter's messages may quote the base URL: never show its userinfo.
    if (error instanceof OpenAiConfigError) throw new CliError('INVALID_MODEL', redactUrlUserinfo(error.message))
    throw error
  }
  if (hasUserinfo(resolved.baseUrl)) {
    // fetch refuses such URLs, and the password would be quoted in errors and the greeting.
    throw new CliError(
      'INVALID_MODEL',
      `the base URL of provider "${name}" carries a user name or password (${redactUrlUserinfo(resolved.baseUrl)}): remove it, and pass credentials as the API key (--api-key-env) or in openai.headers`,
    )
  }
  const chosen = model ?? resolved.defaultModel
  if (!chosen) throw new CliError('INVALID_MODEL', `provider "${name}" has no default model: pass --model <id>`)
  const keyProblem = resolved.apiKeyEnv && resolved.apiKey === undefined ? apiKeyVariableProblem(resolved.apiKeyEnv, name, env, apiKeyProblem) : undefined
  if (keyProblem) throw new CliError('INVALID_MODEL', keyProblem)
  return {
    kind: 'openai',
    provider: name,
    model: chosen,
    config,
    baseUrl: resolved.baseUrl,
    ...(resolved.apiKeyEnv ? { apiKeyEnv: resolved.apiKeyEnv } : {}),
  }
}

function presetNames(): PresetName[] {
  return Object.keys(presets) as PresetName[]
}

function isPreset(name: string): name is PresetName {
  return (presetNames() as string[]).includes(name)
}

/** The preset whose model list has `model`; a model no preset knows needs a provider. */
function presetOf(model: string): string {
  for (const name of presetNames()) if (presets[name].models?.[model]) return name
  throw new CliError(
    'INVALID_MODEL',
    `no preset knows the model "${model}": name its provider (--provider deepseek|openai, or --provider <name> --base-url <url>)`,
  )
}

/**
 * The credentials of `route` the command line must never print: the API key
 * (from its variable or the config file) and the values of the provider's
 * credential-like headers (`Authorization`, `X-Api-Key`, …).
 */
export function routeSecrets(route: ModelRoute, env: NodeJS.ProcessEnv): string[] {
  if (route.kind === 'anthropic') return anthropicSecrets(route, env)
  if (route.kind !== 'openai') return []
  const secrets: string[] = []
  // The adapter sends the key trimmed: text that echoes it holds that form.
  if (route.apiKeyEnv && env[route.apiKeyEnv]) secrets.push(env[route.apiKeyEnv]!, env[route.apiKeyEnv]!.trim())
  if (route.config.apiKey) secrets.push(route.config.apiKey, route.config.apiKey.trim())
  for (const [name, value] of Object.entries(route.config.headers ?? {})) {
    if (!/key|token|auth|secret|cookie/i.test(name)) continue
    secrets.push(value, value.replace(/^\S+\s+/, ''))
  }
  return secrets
}
