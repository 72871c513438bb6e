/** Where `retryAfterMs` looks, besides the standard `retry-after` header. */
export interface RetryAfterHeaders {
  /**
   * A header that carries the wait in milliseconds and wins over
   * `retry-after` (OpenAI sends `retry-after-ms`). Absent: only `retry-after`
   * is read.
   */
  readonly millisecondsHeader?: string
}

const number = /^\s*\d+(\.\d+)?\s*$/

/**
 * Parses the retry hint of a 429/503/529 answer: the `millisecondsHeader`
 * when configured and numeric, then `retry-after` in (possibly fractional)
 * seconds or as an HTTP date measured from `now`. Returns whole milliseconds
 * (rounded up), never negative, or `undefined` when there is no usable hint
 * (none, words, or a number too long to be finite).
 */
export function retryAfterMs(headers: Headers, now: number, where: RetryAfterHeaders = {}): number | undefined {
  if (where.millisecondsHeader !== undefined) {
    const ms = headers.get(where.millisecondsHeader)
    // A number too long for a double reads as Infinity, which the failure (plain JSON, logged) cannot carry.
    if (ms !== null && number.test(ms) && Number.isFinite(Number(ms))) return Math.ceil(Number(ms))
  }
  const after = headers.get('retry-after')
  if (after === null) return undefined
  if (number.test(after)) return Number.isFinite(Number(after) * 1000) ? Math.ceil(Number(after) * 1000) : undefined
  const date = Date.parse(after)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** The first of `names` the answer carries, or `undefined` (a provider's request id header, and its fallbacks). */
export function headerOf(headers: Headers, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = headers.get(name)
    if (value !== null) return value
  }
  return undefined
}
