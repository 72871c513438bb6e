import { BUILT_IN_TYPES } from '@deepseek-ai/dsh-session'

/**
 * Which event types this process knows (R-PER-4): `canonical(type)` returns
 * the one shared string for a known type, or `undefined` for an unknown one
 * (loading swaps each parsed type for it, so a million events share one
 * string).
 */
export interface EventTypeCatalog {
  canonical(type: string): string | undefined
}

/** The built-in types, plus whatever `registered(type)` knows. */
export function eventTypeCatalog(registered: (type: string) => string | undefined = () => undefined): EventTypeCatalog {
  const builtins = new Map<string, string>(BUILT_IN_TYPES.map((type) => [type, type]))
  return { canonical: (type) => builtins.get(type) ?? registered(type) }
}
