/** A JSON value: what may cross the session boundary and the wire. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }
export type JsonObject = { [key: string]: JsonValue }
/** A JSON Schema document, kept as plain JSON (tool parameters). */
export type JsonSchema = JsonObject

/**
 * Deep-freezes a plain JSON-like value in place and returns it. Already-frozen
 * sub-objects are not walked again, so freezing a value built from frozen parts
 * costs O(new parts).
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value
  Object.freeze(value)
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) deepFreeze(value[i])
  } else {
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}
