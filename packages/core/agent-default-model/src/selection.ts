/** A provider/model pair. */
export interface ModelSelection {
  provider: string
  model: string
}

/** The selection a config names, when it names both halves (a half selection would be ambiguous). */
export function normalize(config: { provider?: string; model?: string }): ModelSelection | undefined {
  return config.provider && config.model ? { provider: config.provider, model: config.model } : undefined
}
