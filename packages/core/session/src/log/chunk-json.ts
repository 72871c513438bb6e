import type { ChunkPack } from './chunk-pack'
import { Shape } from './chunk-shape'

/**
 * Reads the JSON text of one `assistant/chunk` event straight from the bytes
 * a backend read, without `JSON.parse`: the load of a long session is mostly
 * these lines, and parsing each into four objects (then dropping them) was
 * the largest part of a resume's time.
 *
 * Only the exact text `JSON.stringify` writes for a chunk event of a
 * documented shape is recognized (no whitespace, keys in the documented
 * order, non-negative integer numbers, a time of at most 15 digits):
 *
 *   {"type":"assistant/chunk","seq":S,"time":T,"data":{"turn":A,"step":B,"chunk":C}}
 *
 * with `C` one of the five string shapes of `chunk-shape.ts`. Strings are
 * taken as ASCII bytes when they hold no escape and no byte above 0x7F, and
 * decoded by `JSON.parse` otherwise. Anything else, a control character in a
 * string included, is not recognized, and the caller parses the line the
 * ordinary way (which also produces its errors).
 */

/** A literal to match: its bytes, and the same read as little-endian 32-bit words. */
interface Literal {
  readonly bytes: Uint8Array
  readonly words: Uint32Array
}

function literal(text: string): Literal {
  const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0))
  const words = new Uint32Array(bytes.length >>> 2)
  const view = new DataView(bytes.buffer)
  for (let i = 0; i < words.length; i++) words[i] = view.getUint32(i * 4, true)
  return { bytes, words }
}

const ENVELOPE = literal('{"type":"assistant/chunk","seq":')
const TIME = literal(',"time":')
const TURN = literal(',"data":{"turn":')
const STEP = literal(',"step":')
const CHUNK = literal(',"chunk":{"type":"')
const TEXT_DELTA = literal('text-delta","index":')
const REASONING_DELTA = literal('reasoning-delta","index":')
const TOOL_CALL_DELTA = literal('tool-call-delta","index":')
const REDACTED_DELTA = literal('redacted-reasoning-delta","index":')
const TEXT = literal(',"text":"')
const SIGNATURE = literal(',"signature":"')
const ARGUMENTS = literal(',"argumentsDelta":"')
const DATA = literal(',"data":"')
const ID = literal(',"id":"')
const NAME = literal(',"name":"')

const QUOTE = 0x22
const BACKSLASH = 0x5c
const BRACE = 0x7d
const T = 0x74 // text-delta, tool-call-delta
const R = 0x72 // reasoning-delta, redacted-reasoning-delta
const MAX_TIME_DIGITS = 15

// The line being read. Module state: a read is synchronous and never re-entered.
let bytes: Buffer = Buffer.alloc(0)
let view = new DataView(bytes.buffer, 0, 0)
let end = 0
let at = 0
/**
 * The strings read so far in this line: `texts[i]` when it had to be decoded,
 * else `undefined` and its ASCII bytes are `bytes[starts[i], ends[i])`.
 */
let parts = 0
const texts: (string | undefined)[] = [undefined, undefined, undefined]
const starts = [0, 0, 0]
const ends = [0, 0, 0]

/** Consumes `word` at the cursor (compared four bytes at a time). */
function word(word: Literal): boolean {
  const length = word.bytes.length
  if (at + length > end) return false
  const words = word.words
  for (let i = 0; i < words.length; i++) if (view.getUint32(at + i * 4, true) !== words[i]) return false
  for (let i = words.length * 4; i < length; i++) if (bytes[at + i] !== word.bytes[i]) return false
  at += length
  return true
}

/** Consumes a non-negative integer without leading zeros, of at most `digits` digits; -1 when there is none. */
function integer(digits: number): number {
  const start = at
  let i = at
  let value = 0
  while (i < end) {
    const digit = bytes[i]! - 48
    if (digit < 0 || digit > 9) break
    value = value * 10 + digit
    i++
  }
  const length = i - start
  if (length === 0 || length > digits || (length > 1 && bytes[start] === 48)) return -1
  at = i
  return value
}

/** Consumes the rest of a string whose opening quote was consumed, as the next part. */
function string(): boolean {
  const start = at
  let i = at
  let plain = true
  while (i < end) {
    const byte = bytes[i]!
    if (byte === QUOTE) break
    if (byte < 0x20) return false
    if (byte === BACKSLASH) {
      plain = false
      i += 2
      continue
    }
    if (byte > 0x7f) plain = false
    i++
  }
  if (i >= end) return false
  let text: string | undefined
  if (!plain) {
    // Escapes or UTF-8: JSON.parse decodes the literal (quotes included), or refuses it.
    try {
      text = JSON.parse(bytes.toString('utf8', start - 1, i + 1)) as string
    } catch {
      return false
    }
  }
  texts[parts] = text
  starts[parts] = start
  ends[parts] = i
  parts++
  at = i + 1
  return true
}

/**
 * Packs the chunk event whose JSON text is `source[start, stop)` (without the
 * line break) into `pack` when it is recognized and its seq is `seq`; returns
 * the packed index, or -1 (nothing changed) when it is not.
 */
export function packChunkJson(pack: ChunkPack, source: Uint8Array, start: number, stop: number, seq: number): number {
  if (source !== bytes) {
    bytes = Buffer.isBuffer(source) ? source : Buffer.from(source.buffer, source.byteOffset, source.byteLength)
    view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }
  end = stop
  at = start
  if (!word(ENVELOPE) || integer(10) !== seq || !word(TIME)) return -1
  const time = integer(MAX_TIME_DIGITS)
  if (time < 0 || !word(TURN)) return -1
  const turn = integer(10)
  if (turn < 1 || turn > 0x7fffffff || !word(STEP)) return -1
  const step = integer(10)
  if (step < 1 || step > 0x7fffffff || !word(CHUNK)) return -1
  const kind = bytes[at]
  let shape: Shape
  if (kind === T && word(TEXT_DELTA)) shape = Shape.Text
  else if (kind === R && word(REASONING_DELTA)) shape = Shape.Reasoning
  else if (kind === T && word(TOOL_CALL_DELTA)) shape = Shape.ToolArguments
  else if (kind === R && word(REDACTED_DELTA)) shape = Shape.RedactedReasoning
  else return -1
  const index = integer(10)
  if (index < 0 || index > 0x7fffffff) return -1
  parts = 0
  if (shape === Shape.ToolArguments) {
    if (word(ID)) {
      if (!string() || !word(NAME) || !string()) return -1
      shape = Shape.ToolCall
    }
    if (!word(ARGUMENTS) || !string()) return -1
  } else if (shape === Shape.RedactedReasoning) {
    if (!word(DATA) || !string()) return -1
  } else {
    if (!word(TEXT) || !string()) return -1
    if (shape === Shape.Reasoning && word(SIGNATURE)) {
      if (!string()) return -1
      shape = Shape.SignedReasoning
    }
  }
  // The chunk, the data and the envelope close, and nothing follows.
  if (at + 3 !== end || bytes[at] !== BRACE || bytes[at + 1] !== BRACE || bytes[at + 2] !== BRACE) return -1
  return pack.addParts(turn, step, time, shape, index, parts, texts, bytes, starts, ends)
}
