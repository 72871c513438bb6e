import type { LlmFailure } from '../failure'
import type { Secrets } from '../redact'

/** How many redirects within the configured origin one request follows before it gives up. */
export const MAX_REDIRECTS = 5

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])

/** Whether `status` asks the client to go elsewhere (the statuses `fetch` would follow). */
export function isRedirect(status: number): boolean {
  return REDIRECT_STATUSES.has(status)
}

/**
 * What to do with a redirect answer to a request sent to `from`: the address
 * to send the same request to, or the failure that ends the call.
 *
 * Only 307 and 308 within `origin` (the configured base URL's scheme, host and
 * port) are followed: they keep the method and the body, and the credentials
 * stay with the server they were configured for. Everything else is refused
 * with an `INVALID_CONFIG` failure that names where the server pointed, so
 * the user can set the base URL to it: a redirect to another origin would
 * carry the API key and the credential headers there (`fetch` strips only
 * `Authorization` on such a redirect), and 301, 302 and 303 turn a POST into
 * a GET that no model API answers.
 */
export function redirectStep(
  provider: string,
  origin: string,
  from: string,
  status: number,
  location: string | null,
  hops: number,
  secrets: Secrets,
): { ok: true; url: string } | { ok: false; failure: LlmFailure } {
  const refuse = (why: string): { ok: false; failure: LlmFailure } => ({
    ok: false,
    failure: { code: 'INVALID_CONFIG', status, message: secrets.redact(`${provider} answered ${status} ${why}`) },
  })
  if (location === null || location.trim() === '') return refuse('(a redirect) without a location to go to')
  let target: URL
  try {
    target = new URL(location, from)
  } catch {
    return refuse('(a redirect) to an address that is not a URL')
  }
  // The query and fragment are left out of messages: a server may put a token there.
  const shown = `${target.origin}${target.pathname}`
  if (target.origin !== origin) {
    return refuse(
      `redirecting to ${shown}, another origin than the configured ${origin}: dsh does not follow it (the API key would go there); set the base URL to the address you trust`,
    )
  }
  if (status !== 307 && status !== 308) {
    return refuse(`redirecting to ${shown}: a ${status} would resend the request as a GET; set the base URL so that it names that address`)
  }
  if (hops >= MAX_REDIRECTS) return refuse(`redirecting to ${shown} after ${MAX_REDIRECTS} redirects already: giving up (a redirect loop?)`)
  return { ok: true, url: target.href }
}
