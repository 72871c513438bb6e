/**
 * The documented shapes of `assistant/chunk` data, recognized field by field.
 *
 * A chunk is a small flat object (dsh-llm's `StreamChunk`), and chunks are
 * nearly every event of a long log, so the session neither walks them with
 * the generic lossless-JSON check nor keeps them as objects once they have
 * been published. Both shortcuts apply only to data of exactly a documented
 * shape:
 *
 * - data `{ turn, step, chunk }`, in this key order, `turn` and `step`
 *   integers from 1 to 2³¹ − 1, with a plain-object (`Object.prototype`)
 *   `chunk`;
 * - a chunk of one of the six shapes below, its keys in this order, each
 *   field of the documented type (`index` an integer in 32-bit range).
 *
 * Anything else (an extra key, another key order, a float index, a `finish`
 * whose reason carries a nested `failure`, …) takes the generic path, which
 * accepts or refuses it with the usual error; it is then kept as an object.
 * So the shortcuts never change what is accepted, refused, or read back.
 */

/** A chunk shape, as stored in the packed columns. */
export const Shape = {
  /** `{ type: 'text-delta', index, text }` */
  Text: 0,
  /** `{ type: 'reasoning-delta', index, text }` */
  Reasoning: 1,
  /** `{ type: 'reasoning-delta', index, text, signature }` */
  SignedReasoning: 2,
  /** `{ type: 'tool-call-delta', index, argumentsDelta }` */
  ToolArguments: 3,
  /** `{ type: 'tool-call-delta', index, id, name, argumentsDelta }` */
  ToolCall: 4,
  /**
   * `{ type: 'usage', usage }` with every field of `usage` a finite number, or
   * `{ type: 'finish', reason }` with every field of `reason` a string, a
   * finite number or a boolean: kept as the frozen chunk object itself.
   */
  Object: 5,
  /** `{ type: 'redacted-reasoning-delta', index, data }` (opaque provider data, kept byte for byte) */
  RedactedReasoning: 6,
} as const
export type Shape = (typeof Shape)[keyof typeof Shape]

/** An integer from 1 to 2³¹ − 1 (a turn or step number that fits a packed column). */
export function isOrdinal(value: unknown): value is number {
  return typeof value === 'number' && (value | 0) === value && value >= 1
}

function isInt32(value: unknown): value is number {
  return typeof value === 'number' && (value | 0) === value
}

/**
 * The shape of chunk data that is exactly documented, or `-1`. Reads each
 * field once and allocates nothing. `data` is any non-null object.
 */
export function chunkDataShape(data: object): Shape | -1 {
  if (Object.getPrototypeOf(data) !== Object.prototype) return -1
  let n = 0
  for (const key in data) {
    if (key !== (n === 0 ? 'turn' : n === 1 ? 'step' : n === 2 ? 'chunk' : '')) return -1
    n++
  }
  if (n !== 3) return -1
  const { turn, step, chunk } = data as { turn: unknown; step: unknown; chunk: unknown }
  if (!isOrdinal(turn) || !isOrdinal(step)) return -1
  if (typeof chunk !== 'object' || chunk === null || Object.getPrototypeOf(chunk) !== Object.prototype) return -1
  const fields = chunk as Record<string, unknown>
  // A text delta, nearly every chunk of an answer, is recognized here: this function is small enough to be
  // inlined into the append path, `chunkShape` is not (one call per chunk, compiled on its own in a new
  // process's first long session). `chunkShape` gives the same answer for it.
  if (fields.type === 'text-delta') return keysAre(fields, 'type', 'index', 'text') && isInt32(fields.index) && typeof fields.text === 'string' ? Shape.Text : -1
  return chunkShape(fields)
}

/** The shape of a plain-object chunk, or `-1`. */
export function chunkShape(chunk: Record<string, unknown>): Shape | -1 {
  switch (chunk.type) {
    case 'text-delta':
      return keysAre(chunk, 'type', 'index', 'text') && isInt32(chunk.index) && typeof chunk.text === 'string' ? Shape.Text : -1
    case 'reasoning-delta':
      if (!isInt32(chunk.index) || typeof chunk.text !== 'string') return -1
      if (keysAre(chunk, 'type', 'index', 'text')) return Shape.Reasoning
      return keysAre(chunk, 'type', 'index', 'text', 'signature') && typeof chunk.signature === 'string' ? Shape.SignedReasoning : -1
    case 'tool-call-delta':
      if (!isInt32(chunk.index) || typeof chunk.argumentsDelta !== 'string') return -1
      if (keysAre(chunk, 'type', 'index', 'argumentsDelta')) return Shape.ToolArguments
      return keysAre(chunk, 'type', 'index', 'id', 'name', 'argumentsDelta') &&
        typeof chunk.id === 'string' &&
        typeof chunk.name === 'string'
        ? Shape.ToolCall
        : -1
    case 'redacted-reasoning-delta':
      return keysAre(chunk, 'type', 'index', 'data') && isInt32(chunk.index) && typeof chunk.data === 'string' ? Shape.RedactedReasoning : -1
    case 'usage':
      return keysAre(chunk, 'type', 'usage') && flatObject(chunk.usage, true) ? Shape.Object : -1
    case 'finish':
      return keysAre(chunk, 'type', 'reason') && flatObject(chunk.reason, false) ? Shape.Object : -1
    default:
      return -1
  }
}

/** Exactly the keys `type, seq, time, data`, in this order: the envelope a packed chunk rebuilds. */
export function envelopeIsPlain(event: object): boolean {
  let n = 0
  for (const key in event) {
    if (key !== (n === 0 ? 'type' : n === 1 ? 'seq' : n === 2 ? 'time' : n === 3 ? 'data' : '')) return false
    n++
  }
  return n === 4
}

/** Freezes a chunk of shape `shape` and what it holds (the caller then freezes the data). */
export function freezeChunk(chunk: Record<string, unknown>, shape: Shape): void {
  if (shape === Shape.Object) Object.freeze(chunk.type === 'usage' ? chunk.usage : chunk.reason)
  Object.freeze(chunk)
}

function keysAre(object: object, a: string, b: string, c?: string, d?: string, e?: string): boolean {
  let n = 0
  for (const key in object) {
    const expected = n === 0 ? a : n === 1 ? b : n === 2 ? c : n === 3 ? d : n === 4 ? e : undefined
    if (key !== expected) return false
    n++
  }
  return n === (e ? 5 : d ? 4 : c ? 3 : 2)
}

/** A plain object whose values are finite numbers (`numbers`), or strings, finite numbers and booleans. */
function flatObject(value: unknown, numbers: boolean): boolean {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return false
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key]
    if (typeof item === 'number') {
      if (!Number.isFinite(item)) return false
    } else if (numbers || (typeof item !== 'string' && typeof item !== 'boolean')) {
      return false
    }
  }
  return true
}
