/** What a redacted secret is replaced with on screen. */
export const REDACTED = '[redacted]'

// `scheme://userinfo@`: the userinfo (a user name, often with a password or a token) is cut.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]*@/gi

/** `text` with the userinfo of every URL in it replaced: `http://[redacted]@host/v1`. */
export function redactUrlUserinfo(text: string): string {
  return text.replace(URL_USERINFO, `$1${REDACTED}@`)
}

/** Whether `url` carries a user name or a password (`http://user:pass@host`). */
export function hasUserinfo(url: string): boolean {
  try {
    const parsed = new URL(url)
    return parsed.username !== '' || parsed.password !== ''
  } catch {
    return redactUrlUserinfo(url) !== url
  }
}

/**
 * Strips the secrets the command line knows of from text it is about to
 * print: the API key (the value of the route's key variable) and the
 * userinfo of any URL. The adapter redacts what reaches the log; this is the
 * last line before the screen, for messages built from provider or
 * transport text (an error that quotes a URL or echoes a header).
 */
export class Redactor {
  private values: string[] = []

  constructor(secrets: readonly (string | undefined)[]) {
    this.add(secrets)
  }

  /** Redacts `secrets` too from now on (the key of a provider `/model` started). */
  add(secrets: readonly (string | undefined)[]): void {
    // Very short values are not credentials (`ollama`, `x`), and replacing them would garble text.
    const values = new Set<string>(this.values)
    for (const value of secrets) if (value && value.length >= 6) values.add(value)
    this.values = [...values].sort((a, b) => b.length - a.length)
  }

  redact(text: string): string {
    let out = redactUrlUserinfo(text)
    for (const value of this.values) if (out.includes(value)) out = out.split(value).join(REDACTED)
    return out
  }
}
