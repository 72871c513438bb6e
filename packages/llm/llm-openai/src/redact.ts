const placeholder = '[redacted]'

/** Header names whose values are credentials, whatever the provider calls them. */
const secretHeader = /key|token|auth|secret|cookie/i

/**
 * The credentials of one call, and a way to strip them from any text that may
 * reach an error message. A provider can echo request headers into an error
 * body; every message built from provider text goes through `redact`.
 */
export class Secrets {
  private readonly values: string[]

  constructor(apiKey: string | undefined, headers: Readonly<Record<string, string>>) {
    const values = new Set<string>()
    // Very short values are not credentials (`ollama`, `x`), and replacing them would garble messages.
    const add = (value: string | undefined) => {
      if (value && value.length >= 6) values.add(value)
    }
    add(apiKey)
    for (const [name, value] of Object.entries(headers)) {
      if (!secretHeader.test(name)) continue
      add(value)
      // `Bearer <token>` style values: the token alone may be echoed as well.
      add(value.replace(/^\S+\s+/, ''))
    }
    // Longest first, so a value that contains another is replaced whole.
    this.values = [...values].sort((a, b) => b.length - a.length)
  }

  redact(text: string): string {
    let out = text
    for (const value of this.values) out = out.split(value).join(placeholder)
    return out
  }

  /** Provider text made fit for a one-line failure message: redacted, whitespace collapsed, at most `max` characters. */
  excerpt(text: string, max: number): string {
    const flat = this.redact(text).replace(/\s+/g, ' ').trim()
    return flat.length > max ? `${flat.slice(0, max)}…` : flat
  }
}
