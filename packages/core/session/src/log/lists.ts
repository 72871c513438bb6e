/**
 * New lists with the elements kind their entries will give them (V8's
 * hidden class of an array follows what it holds: small integers, doubles,
 * or anything else). A per-session list built empty starts as a list of small
 * integers; the first object or fractional number stored changes its hidden
 * class, which deoptimizes the code that was optimized on the previous
 * sessions' lists. Built with their final kind, a new session's lists are
 * what that code expects.
 */

/** An empty list of objects or strings (`sample` is stored once and removed). */
export function emptyList<T>(sample: T): T[] {
  const list = [sample]
  list.pop()
  return list
}

/** A list of `capacity` zeros, for a list written by index and reused by count: writes below `capacity` stay in bounds. */
export function presized(capacity: number): number[] {
  const list: number[] = []
  for (let i = 0; i < capacity; i++) list.push(0)
  return list
}

/** A list of `capacity` copies of `sample` (objects), for a list of objects written by index and reused by count. */
export function filled<T>(sample: T, capacity: number): T[] {
  const list = emptyList(sample)
  for (let i = 0; i < capacity; i++) list.push(sample)
  return list
}
