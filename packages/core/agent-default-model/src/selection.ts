/** A provider/model pair. */
export interface ModelSelection {
  provider: string
  model: string
}

/**
 * The selection a config names: both halves, or neither (no default). Half a
 * selection is refused with an `INVALID_CONFIG` error naming the missing half:
 * dropped silently, it would leave every agent that names no model failing
 * its turns with `NO_MODEL`.
 */
export function normalize(config: { provider?: string; model?: string }): ModelSelection | undefined {
  if (config.provider && config.model) return { provider: config.provider, model: config.model }
  if (!config.provider && !config.model) return undefined
  const [given, missing] = config.provider ? [`provider "${config.provider}"`, 'model'] : [`model "${config.model}"`, 'provider']
  throw Object.assign(new TypeError(`the default model's config names the ${given} but no ${missing}: give both, or neither for no default`), {
    code: 'INVALID_CONFIG',
  })
}
