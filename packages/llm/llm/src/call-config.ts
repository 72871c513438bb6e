import type { LlmCallConfig, ModelInfo, PreparedCall } from './adapter'
import { LlmError } from './failure'

type EffectiveConfig = PreparedCall['config']

function invalid(message: string): LlmError {
  return new LlmError({ code: 'INVALID_CONFIG', message })
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0
}

/**
 * Checks the shape of a call config before anything is resolved: `provider`
 * and `model` are required non-empty strings, the optional knobs have their
 * types. Throws `INVALID_CONFIG` naming the field.
 */
export function checkCallConfig(config: unknown): asserts config is LlmCallConfig & { provider: string; model: string } {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw invalid('the call config must be an object with at least provider and model')
  }
  const c = config as Record<string, unknown>
  if (!isNonEmptyString(c.provider)) {
    throw invalid('the call config names no provider: set config.provider (an agent gets one from agentDefaultModel or an agent/request listener)')
  }
  if (!isNonEmptyString(c.model)) {
    throw invalid(`the call config for provider "${c.provider}" names no model: set config.model`)
  }
  if (c.reasoningEffort !== undefined && !isNonEmptyString(c.reasoningEffort)) {
    throw invalid('config.reasoningEffort must be a non-empty string when set')
  }
  if (c.maxTokens !== undefined && !(Number.isSafeInteger(c.maxTokens) && (c.maxTokens as number) > 0)) {
    throw invalid(`config.maxTokens must be a positive integer when set (got ${String(c.maxTokens)})`)
  }
  if (c.temperature !== undefined && !(typeof c.temperature === 'number' && Number.isFinite(c.temperature) && c.temperature >= 0)) {
    throw invalid(`config.temperature must be a finite number >= 0 when set (got ${String(c.temperature)})`)
  }
}

/**
 * The effective config of a call: the caller's fields (undefined ones left
 * out), with the reasoning effort validated against what the model declares
 * and the model's default filled in. Without model info (no adapter, or an
 * adapter without `resolveModel`) the effort is kept as given: nothing
 * declares what the model accepts. Returns a frozen object.
 */
export function effectiveConfig(
  config: LlmCallConfig & { provider: string; model: string },
  info: ModelInfo | undefined,
): EffectiveConfig {
  const out: Record<string, unknown> = {}
  // An indexed loop: this runs once per model call, mostly before the optimizing compiler gets to it.
  const keys = Object.keys(config)
  for (let i = 0; i < keys.length; i++) {
    const value = (config as unknown as Record<string, unknown>)[keys[i]!]
    if (value !== undefined) out[keys[i]!] = value
  }
  if (info !== undefined) {
    const efforts = info.reasoningEfforts
    const effort = config.reasoningEffort
    if (effort !== undefined) {
      // No list (undefined, or null from an untyped adapter; none made for it: this runs once per model call) or an empty one: the model accepts no effort.
      if (efforts == null || efforts.length === 0) {
        throw invalid(`${routeName(config)} accepts no reasoning effort, but the call asks for "${effort}": remove reasoningEffort`)
      }
      if (!efforts.includes(effort)) {
        throw invalid(`${routeName(config)} does not accept reasoning effort "${effort}"; accepted: ${efforts.join(', ')}`)
      }
    } else if (info.defaultReasoningEffort !== undefined) {
      out.reasoningEffort = info.defaultReasoningEffort
    }
  }
  return Object.freeze(out) as EffectiveConfig
}

/** The route as error messages name it. */
function routeName(config: { provider: string; model: string }): string {
  return `model "${config.model}" of provider "${config.provider}"`
}
