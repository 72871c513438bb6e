import type { LlmCallConfig, ModelInfo, PreparedCall } from './adapter'
import { types } from 'node:util'
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
  let filled: string | undefined
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
      filled = info.defaultReasoningEffort
    }
  }
  // Nothing to fill in, and the caller's config is already what the copy would be: the config itself.
  if (filled === undefined && isSettledConfig(config)) return config as EffectiveConfig
  const out: Record<string, unknown> = {}
  // An indexed loop: this runs once per model call, mostly before the optimizing compiler gets to it.
  const keys = Object.keys(config)
  for (let i = 0; i < keys.length; i++) {
    const value = (config as unknown as Record<string, unknown>)[keys[i]!]
    if (value !== undefined) out[keys[i]!] = value
  }
  if (filled !== undefined) out.reasoningEffort = filled
  return Object.freeze(out) as EffectiveConfig
}

/** Configs `isSettledConfig` accepted (each checked once; an agent passes the same frozen config on every step). */
const settled = new WeakSet<object>()
/** The one accepted last: the usual case (one agent, or one at a time) without the set's lookup. */
let lastSettled: object | undefined

/**
 * Whether `config` is indistinguishable from the frozen copy `effectiveConfig`
 * would make of it: frozen, a plain object (prototype `Object.prototype`, not
 * a `Proxy`), every own property an enumerable string-keyed data property
 * whose value is not `undefined`. Such an object can never change (frozen:
 * its properties are fixed values, its prototype is fixed), so it is checked
 * once and remembered; the copy would hold the same values under the same
 * keys in the same order. Any other config (an unfrozen one, one with an
 * accessor, an `undefined` field, a symbol key, a class instance) is copied
 * as before.
 */
function isSettledConfig(config: object): boolean {
  if (config === lastSettled) return true
  if (!Object.isFrozen(config)) return false
  if (!settled.has(config)) {
    if (Object.getPrototypeOf(config) !== Object.prototype || types.isProxy(config)) return false
    const keys = Reflect.ownKeys(config)
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!
      if (typeof key !== 'string') return false
      const descriptor = Object.getOwnPropertyDescriptor(config, key)!
      if (!descriptor.enumerable || !('value' in descriptor) || descriptor.value === undefined) return false
    }
    settled.add(config)
  }
  lastSettled = config
  return true
}

/** The route as error messages name it. */
function routeName(config: { provider: string; model: string }): string {
  return `model "${config.model}" of provider "${config.provider}"`
}
