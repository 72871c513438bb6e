import { redactUserinfo } from '../redact'

/** A base URL `parseBaseUrl` accepts, or why it refused it. */
export type BaseUrlCheck =
  | { ok: true; /** The URL, normalized by `URL`, without trailing slashes. */ baseUrl: string }
  | { ok: false; problem: 'not-http'; /** What was given, with any URL userinfo redacted (`null` when absent). */ given: unknown }
  | { ok: false; problem: 'userinfo'; /** The URL with `[redacted]` in place of its user name and password. */ shown: string }

/**
 * Checks a provider's base URL: it must be an http(s) URL, and it must not
 * carry a user name or password, which Node's `fetch` refuses and whose error
 * would quote the password into every failure. Never returns the userinfo.
 */
export function parseBaseUrl(value: unknown): BaseUrlCheck {
  let url: URL | undefined
  try {
    url = new URL(String(value ?? ''))
  } catch {
    url = undefined
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    return { ok: false, problem: 'not-http', given: typeof value === 'string' ? redactUserinfo(value) : (value ?? null) }
  }
  if (url.username || url.password) {
    return { ok: false, problem: 'userinfo', shown: `${url.protocol}//[redacted]@${url.host}${url.pathname}` }
  }
  return { ok: true, baseUrl: url.href.replace(/\/+$/, '') }
}

/** An HTTP header name: an RFC 9110 token. */
export const HTTP_HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/**
 * Why a header value cannot be sent (`fetch` takes Latin-1 without NUL, CR
 * or LF), as a phrase (`contains … at position 7, …`), or `undefined`. Never
 * quotes the value: it may be a credential.
 */
export function headerValueProblem(value: string): string | undefined {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code === 0 || code === 0x0a || code === 0x0d) return `contains a line break or NUL at position ${i + 1}`
    if (code > 0xff) {
      return `contains the character U+${code.toString(16).toUpperCase().padStart(4, '0')} at position ${i + 1}, which an HTTP header cannot carry`
    }
  }
  return undefined
}

/** Drops `undefined` and `null` fields, so that only what the user wrote overrides a preset. */
export function definedFields<T extends object>(value: T): Partial<T> {
  const out: Partial<T> = {}
  for (const key of Object.keys(value) as (keyof T)[]) {
    if (value[key] !== undefined && value[key] !== null) out[key] = value[key]
  }
  return out
}
