import type { LlmFailure } from '../failure'

/** Where an adapter's provider config says the API key is. */
export interface ApiKeySettings {
  /** The key itself (already trimmed and checked when the config was resolved). */
  readonly apiKey?: string
  /** The environment variable holding the key, read at each call. */
  readonly apiKeyEnv?: string
}

/** Where a call's API key comes from, and whether it can be used. Never printed whole: `key` is a secret. */
export interface ApiKeyLookup {
  /** The key, trimmed as `fetch` would trim a header value. */
  key?: string
  /** Where the key comes from, for messages (never the key): `the apiKey of provider "x"`, `the X environment variable`. */
  source?: string
  /** The environment variable that is named but unset or blank. */
  missing?: string
  /** Why the key from the environment cannot be sent in a header (a phrase such as `contains a space at position 3; …`). */
  problem?: string
}

/** The first character of an API key that cannot be part of one, found by `apiKeyCharacterProblem`. */
export interface ApiKeyCharacterProblem {
  /** 1-based position (in UTF-16 code units, as JavaScript counts). */
  position: number
  /** The code point that starts at that position. */
  codePoint: number
  /** What it is: a space or tab, a line break, a character beyond ASCII, or another control character. */
  kind: 'space' | 'line-break' | 'non-ascii' | 'control'
}

/**
 * The first character of `key` that is not printable ASCII, or `undefined`.
 * A key goes into an HTTP header, which carries only Latin-1, and real keys
 * are printable ASCII: anything else is a paste accident (a typographic dash
 * or quote, a space, a line break in the middle). The answer locates the
 * character and never contains the key; each adapter words it.
 */
export function apiKeyCharacterProblem(key: string): ApiKeyCharacterProblem | undefined {
  for (let i = 0; i < key.length; i++) {
    const codePoint = key.codePointAt(i)!
    if (codePoint >= 0x21 && codePoint <= 0x7e) continue
    const kind =
      codePoint === 0x20 || codePoint === 0x09
        ? 'space'
        : codePoint === 0x0a || codePoint === 0x0d
          ? 'line-break'
          : codePoint > 0x7e
            ? 'non-ascii'
            : 'control'
    return { position: i + 1, codePoint, kind }
  }
  return undefined
}

/** `U+00A0`: a code point as messages write it. */
export function codePointLabel(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`
}

/**
 * Finds a call's API key: the configured `apiKey` first, else the trimmed
 * value of `apiKeyEnv` in `env` (read at each call, so a key exported after
 * startup is picked up). `keyProblem` is the adapter's check of a key from the
 * environment (a configured key was checked when the config was resolved).
 * An empty lookup means the provider needs no key.
 */
export function lookUpApiKey(
  settings: ApiKeySettings,
  provider: string,
  env: Readonly<Record<string, string | undefined>>,
  keyProblem: (key: string) => string | undefined,
): ApiKeyLookup {
  const { apiKey, apiKeyEnv } = settings
  if (apiKey) return { key: apiKey, source: `the apiKey of provider "${provider}"` }
  if (!apiKeyEnv) return {}
  const key = env[apiKeyEnv]?.trim()
  if (!key) return { missing: apiKeyEnv }
  return { key, source: `the ${apiKeyEnv} environment variable`, problem: keyProblem(key) }
}

/** What `preflightCall` decided: the model to call, or the failure that ends the call before anything is sent. */
export type CallPreflight = { ok: true; model: string } | { ok: false; failure: LlmFailure }

/**
 * Checks a call before anything goes on the wire: no model and no default
 * (`INVALID_CONFIG`), an unset key variable (`AUTH`, naming the variable), or
 * a key a header cannot carry (`INVALID_CONFIG`: a configuration error no
 * retry would fix), in that order.
 */
export function preflightCall(provider: string, model: string | undefined, key: ApiKeyLookup): CallPreflight {
  if (!model) {
    return { ok: false, failure: { code: 'INVALID_CONFIG', message: `no model given for provider "${provider}", and it has no defaultModel` } }
  }
  if (key.missing) {
    const message = `the ${key.missing} environment variable is not set; export the API key for provider "${provider}" there, or configure apiKey`
    return { ok: false, failure: { code: 'AUTH', message } }
  }
  if (key.problem) return { ok: false, failure: { code: 'INVALID_CONFIG', message: `the API key in ${key.source} ${key.problem}` } }
  return { ok: true, model }
}
