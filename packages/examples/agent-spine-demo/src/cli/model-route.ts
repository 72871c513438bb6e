import { OpenAiConfigError, presets, resolveProvider, type PresetName, type ProviderConfig } from '@deepseek-ai/dsh-llm-openai'
import { Config as ScriptedConfigSchema, type ScriptedConfig } from '@deepseek-ai/dsh-llm-scripted'
import { validateFields } from './config-file'
import { CliError } from './errors'

/** The scripted model's id in the demo; it accepts these reasoning efforts (each streams a one-line reasoning block). */
export const DEMO_MODEL = 'demo'
const DEMO_EFFORTS = ['low', 'medium', 'high']

/** Which adapter answers, under which provider/model pair. */
export type ModelRoute =
  | { kind: 'scripted'; provider: string; model: string; scripted: ScriptedConfig }
  | { kind: 'openai'; provider: string; model: string; config: ProviderConfig; baseUrl: string; apiKeyEnv?: string }

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
 * without a base URL, a model no preset knows, no model at all, or an API key
 * variable that is not set (checked here so the person learns it before
 * typing a prompt). `where` prefixes config-file problems.
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
    return { kind: 'scripted', provider: scripted.provider, model: model ?? DEMO_MODEL, scripted }
  }

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
    if (error instanceof OpenAiConfigError) throw new CliError('INVALID_MODEL', error.message)
    throw error
  }
  const chosen = model ?? resolved.defaultModel
  if (!chosen) throw new CliError('INVALID_MODEL', `provider "${name}" has no default model: pass --model <id>`)
  if (resolved.apiKeyEnv && resolved.apiKey === undefined && !env[resolved.apiKeyEnv]) {
    throw new CliError(
      'INVALID_MODEL',
      `${resolved.apiKeyEnv} is not set: export the API key of provider "${name}" in it (or name another variable with --api-key-env)`,
    )
  }
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
