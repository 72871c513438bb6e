/**
 * Small text helpers shared by the tools. Every cut is made on a code point
 * boundary (never between the halves of a surrogate pair) and says what it
 * left out, so the model can tell a short text from a cut one.
 */

import { safeEnd } from '@deepseek-ai/dsh-llm'

/** `text` cut to at most `max` characters (code units), with `…` at the end when cut. */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text
  return `${text.slice(0, safeEnd(text, max - 1))}…`
}

/** One line cut to `max` characters, saying how many were left out. */
export function clipLine(line: string, max: number): string {
  if (line.length <= max) return line
  const end = safeEnd(line, max)
  return `${line.slice(0, end)}… [${line.length - end} more characters]`
}


/**
 * The lines of a text file: split on `\n`, a final newline ends the last
 * line rather than starting an empty one, and a `\r` before the newline is
 * not part of the line (CRLF files read like LF ones).
 */
export function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (line.endsWith('\r')) lines[i] = line.slice(0, -1)
  }
  return lines
}

/** `cat -n` style: the 1-based line number right-aligned in six columns, a tab, the line. */
export function numbered(number: number, line: string): string {
  return `${String(number).padStart(6)}\t${line}`
}

/** Whether bytes look binary: a NUL byte anywhere (text files have none). */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.includes(0)
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const lenientUtf8 = new TextDecoder('utf-8', { ignoreBOM: true })

/** Decodes UTF-8, keeping a byte order mark; undefined when the bytes are not valid UTF-8. */
export function decodeStrict(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes)
  } catch {
    return undefined
  }
}

/** Decodes UTF-8, replacing invalid sequences with U+FFFD (for reading, never for editing). */
export function decodeLenient(bytes: Uint8Array): string {
  return lenientUtf8.decode(bytes)
}

/** `n thing` or `n things`. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`
}

/** UTF-16 code unit order: the same on every machine and locale, so a listing is byte-stable (the KV cache). */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
