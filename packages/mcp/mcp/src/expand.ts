/**
 * `${VAR}` and `${VAR:-default}` expansion from the environment, as other
 * agents read the `mcpServers` shape. A `$` that does not open `${NAME}` or
 * `${NAME:-…}` is kept as it is. Names are `[A-Za-z_][A-Za-z0-9_]*`.
 */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

/** What expanding one string gave: the text, the values substituted into it, and the names that were not set. */
export interface Expansion {
  readonly text: string
  /** The values that came from the environment or a default, in order (for redaction). */
  readonly substituted: readonly string[]
  /** Variables referenced without a default that the environment does not set. */
  readonly missing: readonly string[]
}

/** Expands every reference in `text` from `env`; an empty variable counts as set. */
export function expandVariables(text: string, env: Readonly<Record<string, string | undefined>>): Expansion {
  if (!text.includes('${')) return { text, substituted: [], missing: [] }
  const substituted: string[] = []
  const missing: string[] = []
  const out = text.replace(REFERENCE, (whole, name: string, fallback: string | undefined) => {
    const value = env[name]
    if (value !== undefined) {
      substituted.push(value)
      return value
    }
    if (fallback !== undefined) {
      substituted.push(fallback)
      return fallback
    }
    missing.push(name)
    return whole
  })
  return { text: out, substituted, missing }
}
