/**
 * Freezing for data that is lossless JSON by construction (what `JSON.parse`
 * returns): no validation walk, one pass that freezes every object and array
 * and shares repeated vocabulary strings.
 *
 * `JSON.parse` gives every string value longer than ten characters its own
 * copy, so a loaded log repeats `"tool-result"`, a model or provider name or
 * a tool name once per event that carries it. Under a handful of keys whose
 * values come from a small vocabulary, the value is swapped for one shared
 * string; ids, text and arguments (unique or large) are left alone.
 */

const VOCABULARY_KEYS: Readonly<Record<string, true>> = Object.assign(Object.create(null), {
  type: true,
  role: true,
  kind: true,
  provider: true,
  model: true,
  name: true,
  code: true,
  placement: true,
  target: true,
  status: true,
})

/** Vocabulary strings seen on load; bounded, so a log of unusual values cannot grow it without limit. */
const shared = new Map<string, string>()
const MAX_SHARED = 4096
const MAX_SHARED_LENGTH = 64

function share(value: string): string {
  if (value.length > MAX_SHARED_LENGTH) return value
  const known = shared.get(value)
  if (known !== undefined) return known
  if (shared.size < MAX_SHARED) shared.set(value, value)
  return value
}

/** Deep-freezes `value` (plain JSON) in place, sharing vocabulary strings; returns it. */
export function freezeTrusted<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      if (typeof item === 'object' && item !== null) freezeTrusted(item)
    }
  } else {
    const record = value as Record<string, unknown>
    for (const key in record) {
      const item = record[key]
      if (typeof item === 'object') {
        if (item !== null) freezeTrusted(item)
      } else if (typeof item === 'string' && item.length > 10 && VOCABULARY_KEYS[key] === true) {
        const one = share(item)
        // A value pushed by the backend itself (a repair) may hold frozen parts already.
        if (one !== item && !Object.isFrozen(record)) record[key] = one
      }
    }
  }
  return Object.freeze(value)
}

/**
 * Freezes data a driver built for one event (`appendBuilt`), an object not
 * frozen yet: it and every object or array it holds that is not frozen yet
 * are frozen, and the walk stops at a frozen one, whose whole subtree the
 * contract says is frozen already (a deep-frozen message, an admitted
 * chunk's usage). Each part is tested before the recursive call, so the
 * numbers and strings of an event's data, and its frozen parts, cost no call.
 */
export function freezeUnfrozen(value: object): void {
  // Frozen first, so a cycle ends the walk where it closes.
  Object.freeze(value)
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      if (item !== null && typeof item === 'object' && !Object.isFrozen(item)) freezeUnfrozen(item)
    }
  } else {
    for (const key in value) {
      const item: unknown = (value as Record<string, unknown>)[key]
      if (item !== null && typeof item === 'object' && !Object.isFrozen(item)) freezeUnfrozen(item)
    }
  }
}
