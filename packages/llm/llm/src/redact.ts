import type { LlmFailure } from './failure'
import type { CallId } from './ids'
import type { StreamChunk } from './stream'

/**
 * Secret redaction shared by the provider adapters: one implementation, so
 * every adapter strips the same credential shapes from what it writes and the
 * exact credential values from model output, across delta boundaries.
 */

/** What a redacted secret is replaced with. */
export const REDACTED = '[redacted]'
const placeholder = REDACTED

/** Header names whose values are credentials, whatever the provider calls them. */
const secretHeader = /key|token|auth|secret|cookie|password|credential/i

/**
 * Credential shapes that are redacted from failure text even when they are not
 * this call's own credentials (a proxy's, or a key the server mixed up): a
 * `Bearer`/`Basic` token (at least 8 characters, with a digit or a symbol, so
 * the words "Bearer authentication" survive) and the key formats of the
 * common providers (`sk-ant-…`, `sk-…`, `AIza…`, `gsk_…`, `hf_…`, `ghp_…`,
 * `xai-…`). `sk-ant-` comes first and needs fewer characters: an Anthropic
 * key is recognisable from its prefix alone.
 */
const credentialShapes: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(Bearer|Basic)(\s+)(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}/gi, `$1$2${placeholder}`],
  [/\bsk-ant-[A-Za-z0-9_-]{8,}/g, placeholder],
  [/\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{16,}/g, placeholder],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, placeholder],
  [/\b(?:gsk|hf|ghp|gho|github_pat|xai)[-_][A-Za-z0-9_]{16,}/g, placeholder],
]

/**
 * `scheme://user:password@` in any URL: the userinfo goes, the scheme and host
 * stay. Up to the last `@` of the authority, as URL parsers read it, so a
 * password with an unencoded `@` goes whole.
 */
const urlUserinfo = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#"'<>]*@/gi

/**
 * Removes the userinfo of every URL in `text` (`http://user:pw@host` →
 * `http://[redacted]@host`). Used on configuration values quoted in errors.
 */
export function redactUserinfo(text: string): string {
  return text.replace(urlUserinfo, `$1${placeholder}@`)
}

/** Longest first, so a value that contains another is replaced whole. */
function byLength(values: Iterable<string>): string[] {
  return [...new Set(values)].sort((a, b) => b.length - a.length)
}

/**
 * The credentials of one call, and a way to strip them from any text that may
 * leave the adapter. A provider or a proxy can echo request headers into an
 * error body, a response header or the stream itself.
 *
 * `redact` is for text the adapter writes (failure messages, request ids,
 * model info): the exact credential values, the common credential shapes and
 * URL userinfo go. Model output goes through a `ContentRedactor` instead,
 * which replaces only the exact values (a model that writes `sk-…` in an
 * example is not leaking anything) but does so across delta boundaries.
 */
export class Secrets {
  /** The exact credential values, longest first. */
  readonly values: readonly string[]

  constructor(apiKey: string | undefined, headers: Readonly<Record<string, string>>) {
    const values: string[] = []
    // Very short values are not credentials (`ollama`, `x`), and replacing them would garble messages.
    const add = (value: string | undefined) => {
      if (value && value.length >= 6) values.push(value)
    }
    add(apiKey)
    for (const [name, value] of Object.entries(headers)) {
      if (!secretHeader.test(name)) continue
      add(value)
      // `Bearer <token>` style values: the token alone may be echoed as well.
      add(value.replace(/^\S+\s+/, ''))
    }
    this.values = byLength(values)
  }

  /** Replaces the exact credential values only. */
  redactValues(text: string): string {
    let out = text
    for (const value of this.values) if (out.includes(value)) out = out.split(value).join(placeholder)
    return out
  }

  /** Replaces the credential values, credential shapes and URL userinfo. */
  redact(text: string): string {
    let out = this.redactValues(text)
    for (const [shape, replacement] of credentialShapes) out = out.replace(shape, replacement)
    return redactUserinfo(out)
  }

  /** Provider text made fit for a one-line failure message: redacted, whitespace collapsed, at most `max` characters. */
  excerpt(text: string, max: number): string {
    const flat = this.redact(text).replace(/\s+/g, ' ').trim()
    return flat.length > max ? `${flat.slice(0, max)}…` : flat
  }

  /**
   * A failure fit to leave the adapter: its message and request id redacted
   * (the request id comes from a response header, which an echoing server or
   * proxy fills with whatever it was sent), the request id shortened.
   */
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

/** A request id longer than this is not an id; it is cut. */
const maxRequestId = 200

const isWordChar = (code: number) =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95

/** A content delta: the chunks whose text is model output. */
export type ContentChunk = Extract<StreamChunk, { type: 'text-delta' | 'reasoning-delta' | 'tool-call-delta' }>

/** One block's text that is not passed on yet, and the last character that was. */
interface Held {
  readonly type: ContentChunk['type']
  text: string
  /** The character code of the last character passed on, -1 before the first. */
  last: number
}

/**
 * Redacts the exact credential values from streamed model output, per content
 * block, across delta boundaries: a delta that ends with the start of a
 * credential (at a word boundary) keeps that tail back until the next delta of
 * the block shows whether the credential follows, and `flush` releases what
 * is still held before the stream ends (call it before `usage` and `finish`).
 * A `reasoning-delta` with a `signature` closes its block: it carries the
 * block's held text and is never held back. Without credentials, every chunk
 * passes untouched.
 *
 * The word-boundary rule keeps ordinary prose from being held back (a delta
 * ending in "has" is not the start of `sk-…`); a credential glued to the word
 * before it and split exactly there is the one case it does not catch.
 */
export class ContentRedactor {
  private readonly held = new Map<number, Held>()

  constructor(private readonly secrets: Secrets) {}

  /**
   * What to pass on for `chunk`: the chunk itself when nothing changes, a
   * copy with the text that can go now, or `undefined` when all of it is held
   * back (never for the first delta of a tool call, which carries the id and
   * name; those are redacted whole).
   */
  pass(chunk: ContentChunk): ContentChunk | undefined {
    const values = this.secrets.values
    if (values.length === 0) return chunk
    const own = chunk.type === 'tool-call-delta' ? chunk.argumentsDelta : chunk.text
    const text = this.text(chunk.type, chunk.index, own)
    if (chunk.type === 'reasoning-delta' && chunk.signature !== undefined) {
      // A signature closes its thinking block: whatever the block still holds was not a credential, and
      // the chunk (opaque state the provider needs back) is never dropped.
      const rest = this.release(chunk.index)
      return text + rest === own ? chunk : { ...chunk, text: text + rest }
    }
    if (chunk.type !== 'tool-call-delta') {
      if (!text) return undefined
      return text === own ? chunk : { ...chunk, text }
    }
    if (chunk.id === undefined && chunk.name === undefined) {
      if (!text) return undefined
      return text === own ? chunk : { ...chunk, argumentsDelta: text }
    }
    const out: ContentChunk = { ...chunk, argumentsDelta: text }
    if (chunk.id !== undefined) out.id = this.secrets.redactValues(chunk.id) as CallId
    if (chunk.name !== undefined) out.name = this.secrets.redactValues(chunk.name)
    return out
  }

  /** Releases every block's held text (it was not the start of a credential after all), in block order. */
  flush(): ContentChunk[] {
    const out: ContentChunk[] = []
    for (const [index, held] of [...this.held].sort((a, b) => a[0] - b[0])) {
      if (!held.text) continue
      out.push(
        held.type === 'tool-call-delta'
          ? { type: 'tool-call-delta', index, argumentsDelta: held.text }
          : { type: held.type, index, text: held.text },
      )
      held.text = ''
    }
    return out
  }

  /** Takes the text block `index` holds back, now known not to start a credential. */
  private release(index: number): string {
    const held = this.held.get(index)
    if (!held) return ''
    const text = held.text
    held.text = ''
    return text
  }

  /** The text of block `index` that can go now, `text` being its next delta. */
  private text(type: ContentChunk['type'], index: number, text: string): string {
    const held = this.held.get(index)
    const before = held?.last ?? -1
    const pending = this.secrets.redactValues(held ? held.text + text : text)
    const keep = heldTail(pending, this.secrets.values, before)
    const out = pending.slice(0, pending.length - keep)
    const last = out ? out.charCodeAt(out.length - 1) : before
    if (held === undefined) this.held.set(index, { type, text: pending.slice(pending.length - keep), last })
    else {
      held.text = pending.slice(pending.length - keep)
      held.last = last
    }
    return out
  }
}

/**
 * The length of the longest tail of `text` that is a proper prefix of one of
 * `values` and starts at a word boundary (`before` is the character code
 * preceding `text`, -1 at the start of the block).
 */
function heldTail(text: string, values: readonly string[], before: number): number {
  let keep = 0
  for (const value of values) {
    const from = Math.max(0, text.length - value.length + 1)
    const first = value.charCodeAt(0)
    for (let i = from; i < text.length && text.length - i > keep; i++) {
      if (text.charCodeAt(i) !== first) continue
      const previous = i > 0 ? text.charCodeAt(i - 1) : before
      if (isWordChar(previous) && isWordChar(first)) continue
      if (value.startsWith(text.slice(i))) {
        keep = text.length - i
        break
      }
    }
  }
  return keep
}
