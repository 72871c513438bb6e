/** What a redacted secret is replaced with. */
export const REDACTED = '[redacted]'

// `scheme://userinfo@`: the user name and password (or token) of a URL.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]*@/gi

/**
 * Replaces the secrets of one server (the values of its `env` and `headers`,
 * and what `${VAR}` put into its URL) with `[redacted]`, and the userinfo of
 * any URL. Applied to everything this package lets out about the server: tool
 * results and descriptions (which the log keeps), error messages, status,
 * events and the server's stderr tail.
 *
 * Values shorter than `MIN_SECRET_CHARS` are not treated as secrets
 * (`DEBUG=1` must not turn every `1` of a result into `[redacted]`).
 */
export class Redactor {
  static readonly MIN_SECRET_CHARS = 6
  private readonly values: readonly string[]

  constructor(secrets: Iterable<string>) {
    const values = new Set<string>()
    for (const value of secrets) if (value.length >= Redactor.MIN_SECRET_CHARS) values.add(value)
    // The longest first, so a secret that contains another is replaced whole.
    this.values = [...values].sort((a, b) => b.length - a.length)
  }

  /** Whether this server has any secret to hide (else `redact` only cuts URL userinfo). */
  get empty(): boolean {
    return this.values.length === 0
  }

  redact(text: string): string {
    let out = text.includes('://') ? text.replace(URL_USERINFO, `$1${REDACTED}@`) : text
    for (const value of this.values) if (out.includes(value)) out = out.split(value).join(REDACTED)
    return out
  }
}
