/**
 * Where to cut a string without splitting a surrogate pair (an emoji, a rare
 * CJK character). A cut between the halves leaves a lone surrogate, which
 * `JSON.stringify` writes as `\ud83d`: strict provider parsers refuse the
 * whole request, and a cut text kept in history is in every later one. Both
 * clamp to `[0, text.length]`.
 */

/** The largest index ≤ `end` that does not split a surrogate pair: for `text.slice(0, end)`. */
export function safeEnd(text: string, end: number): number {
  if (end <= 0 || end >= text.length) return Math.max(0, Math.min(end, text.length))
  const code = text.charCodeAt(end - 1)
  return code >= 0xd800 && code <= 0xdbff ? end - 1 : end
}

/** The smallest index ≥ `start` that does not split a surrogate pair: for `text.slice(start)`. */
export function safeStart(text: string, start: number): number {
  if (start <= 0 || start >= text.length) return Math.max(0, Math.min(start, text.length))
  const code = text.charCodeAt(start)
  return code >= 0xdc00 && code <= 0xdfff ? start + 1 : start
}
