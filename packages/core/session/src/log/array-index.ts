/**
 * Index arithmetic shared by the read-only array views of this folder (the
 * events view and the history snapshot): how a property key or a relative
 * index argument reads as an array index, exactly as `Array` reads it.
 */

/** The array index a property key names, or -1. */
export function toIndex(key: string): number {
  const length = key.length
  if (length === 0 || length > 10) return -1
  let value = 0
  for (let i = 0; i < length; i++) {
    const digit = key.charCodeAt(i) - 48
    if (digit < 0 || digit > 9 || (digit === 0 && i === 0 && length > 1)) return -1
    value = value * 10 + digit
  }
  return value
}

/**
 * A relative index argument (`slice`'s `start`, `indexOf`'s `fromIndex`) as
 * `Array.prototype`'s methods read it, clamped to `[0, length]`;
 * `fallback` when it is `undefined`.
 */
export function relativeIndex(value: unknown, length: number, fallback: number): number {
  if (value === undefined) return fallback
  const n = Math.trunc(Number(value)) || 0
  return n < 0 ? Math.max(length + n, 0) : Math.min(n, length)
}

/** `callback` itself when it is a function; the `TypeError` `Array`'s methods throw otherwise. */
export function callable<F>(callback: F): F {
  if (typeof callback !== 'function') throw new TypeError(`${String(callback)} is not a function`)
  return callback
}
