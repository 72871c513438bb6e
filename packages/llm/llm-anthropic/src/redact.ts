import type { LlmFailure } from '@deepseek-ai/dsh-llm'

const placeholder = '[redacted]'

/** Header names whose values are credentials, whatever the provider calls them. */
const secretHeader = /key|token|auth|secret|cookie|password|credential/i

/** Credential shapes redacted from failure text even when they are not this call's own (a proxy's, a mixed-up key). */
const credentialShapes: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(Bearer|Basic)(\s+)(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}/gi, `$1$2${placeholder}`],
  [/\bsk-ant-[A-Za-z0-9_-]{8,}/g, placeholder],
  [/\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{16,}/g, placeholder],
]

const urlUserinfo = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#"'<>]*@/gi

/** A request id longer than this is not an id; it is cut. */
const maxRequestId = 200

/**
 * The credentials of one call, and the means to strip them from anything that
 * leaves the adapter. A provider or a proxy can echo request headers into an
 * error body, a response header or the stream itself.
 */
export class Secrets {
  /** The exact credential values, longest first. */
  readonly values: readonly string[]

  constructor(apiKey: string | undefined, headers: Readonly<Record<string, string>>) {
    const values = new Set<string>()
    // Very short values are not credentials, and replacing them would garble messages.
    const add = (value: string | undefined) => {
      if (value && value.length >= 6) values.add(value)
    }
    add(apiKey)
    for (const [name, value] of Object.entries(headers)) {
      if (!secretHeader.test(name)) continue
      add(value)
      add(value.replace(/^\S+\s+/, ''))
    }
    this.values = [...values].sort((a, b) => b.length - a.length)
  }

  /** Replaces the exact credential values only (for model output: a model that writes `sk-…` in an example leaks nothing). */
  redactValues(text: string): string {
    let out = text
    for (const value of this.values) if (out.includes(value)) out = out.split(value).join(placeholder)
    return out
  }

  /** Replaces the credential values, credential shapes and URL userinfo (for text the adapter writes). */
  redact(text: string): string {
    let out = this.redactValues(text)
    for (const [shape, replacement] of credentialShapes) out = out.replace(shape, replacement)
    return out.replace(urlUserinfo, `$1${placeholder}@`)
  }

  /** Provider text made fit for a one-line message: redacted, whitespace collapsed, at most `max` characters. */
  excerpt(text: string, max: number): string {
    const flat = this.redact(text).replace(/\s+/g, ' ').trim()
    return flat.length > max ? `${flat.slice(0, max)}…` : flat
  }

  /** A failure fit to leave the adapter: message and request id redacted, the request id shortened. */
  failure(failure: LlmFailure): LlmFailure {
    const out: LlmFailure = { ...failure, message: this.redact(failure.message) }
    if (failure.requestId !== undefined) {
      const requestId = this.excerpt(failure.requestId, maxRequestId)
      if (requestId) out.requestId = requestId
      else delete out.requestId
    }
    return out
  }
}
