import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { serializeEvent } from './line-format'

/** The size of one block of queued bytes; a longer line gets a block of its own. */
const BLOCK_BYTES = 1 << 16
const NEWLINE = 0x0a
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN = 0x7b
const CLOSE = 0x7d
/** Integers below this are written digit by digit (their text is what `String(n)` gives). */
const MAX_PLAIN_INTEGER = 1e15

const ascii = (text: string) => Buffer.from(text, 'latin1')
const CHUNK_PREFIX = ascii('{"type":"assistant/chunk","seq":')
const TIME = ascii(',"time":')
const DATA = ascii(',"data":')
const DATA_TURN = ascii(',"data":{"turn":')
const STEP = ascii(',"step":')
const TRUE = ascii('true')
const FALSE = ascii('false')
const NULL = ascii('null')

/**
 * Serialized events waiting to be written: one line per event, in blocks of
 * bytes (each a `Buffer` of 64 KiB, filled in order, reused once written),
 * so the write-behind queue never holds a string per event and a batch is
 * written without joining strings and encoding them again.
 *
 * An `assistant/chunk` event, most of a streamed session, is encoded
 * straight into the block: its JSON is written field by field, exactly the
 * bytes `serializeEvent` (`JSON.stringify` of its fields) produces; a string
 * that needs escaping or is not ASCII is encoded by `JSON.stringify`, and an
 * event with anything unusual (a nested array, a non-integer time, an
 * `ignorable` mark) is serialized by `serializeEvent`. So the file is the
 * same either way, and a loader can read chunk lines back from the bytes.
 */
export class LineBuffer {
  /** The number of lines (events) queued. */
  lines = 0
  /** The number of bytes queued. */
  bytes = 0

  /** The number of lines (events) queued: `lines`, under the name `WriteBehindQueue` reads. */
  get length(): number {
    return this.lines
  }

  /** Filled blocks waiting to be taken, each with how much of it is filled. */
  private readonly blocks: Buffer[] = []
  private readonly filled: number[] = []
  private current: Buffer | undefined
  private used = 0
  /** Written blocks handed back (`release`), reused so that streaming does not allocate a block per 64 KiB. */
  private readonly spare: Buffer[] = []

  /**
   * Queues `event` as one line; returns the bytes it took (newline included).
   * Throws what `JSON.stringify` throws (a cycle, a BigInt), queueing nothing.
   */
  addEvent(event: AnySessionEvent): number {
    if (event.type === 'assistant/chunk' && event.ignorable !== true) {
      const bound = dataBound(event.data, 2)
      if (bound >= 0) {
        const start = this.reserve(ENVELOPE_BOUND + bound)
        const end = encodeChunk(event, this.current!, start)
        if (end >= 0 && end < this.current!.length) return this.commit(start, end)
      }
    }
    return this.addLine(serializeEvent(event))
  }

  /** Queues an already serialized line (without its newline); returns the bytes it took. */
  addLine(line: string): number {
    const start = this.reserve(line.length * 3 + 1)
    const end = start + this.current!.write(line, start, 'utf8')
    return this.commit(start, end)
  }

  /**
   * Takes everything queued, in order: `blocks` are the bytes to write (views
   * of the queue's blocks), `lines` the number of lines they hold. Hand the
   * batch back with `release` once it is written, so its blocks are reused.
   */
  take(): QueuedBatch {
    this.close()
    const buffers = this.blocks.splice(0)
    const blocks = buffers.map((buffer, i) => buffer.subarray(0, this.filled[i]))
    this.filled.length = 0
    const lines = this.lines
    this.lines = 0
    this.bytes = 0
    return { blocks, lines, buffers }
  }

  /** Hands back a written batch: its blocks take new lines. */
  release(batch: QueuedBatch): void {
    for (const buffer of batch.buffers) {
      if (buffer.length === BLOCK_BYTES && this.spare.length < MAX_SPARE) this.spare.push(buffer)
    }
    batch.buffers.length = 0
  }

  /** Drops everything queued. */
  clear(): void {
    this.release(this.take())
  }

  /** Makes room for `bound` bytes in the current block and returns where they start. */
  private reserve(bound: number): number {
    if (this.current === undefined || this.used + bound > this.current.length) {
      this.close()
      this.current = bound <= BLOCK_BYTES ? (this.spare.pop() ?? Buffer.allocUnsafeSlow(BLOCK_BYTES)) : Buffer.allocUnsafeSlow(bound)
    }
    return this.used
  }

  private commit(start: number, end: number): number {
    this.current![end] = NEWLINE
    this.used = end + 1
    this.lines++
    const taken = end + 1 - start
    this.bytes += taken
    return taken
  }

  /** Moves the current block to the queue of blocks, unless nothing was written into it. */
  private close(): void {
    if (this.current === undefined || this.used === 0) return
    this.blocks.push(this.current)
    this.filled.push(this.used)
    this.current = undefined
    this.used = 0
  }
}

/** A batch taken from a `LineBuffer`. */
export interface QueuedBatch {
  readonly blocks: readonly Buffer[]
  readonly lines: number
  /** The blocks themselves, for `release`. */
  readonly buffers: Buffer[]
}

/** How many written blocks a queue keeps for reuse (1 MiB). */
const MAX_SPARE = 16

/** What the envelope of a chunk line takes besides its data: the prefix, the seq, the time and the braces. */
const ENVELOPE_BOUND = 96

/**
 * An upper bound of the bytes `value` takes as JSON (escaping takes at most
 * six bytes per UTF-16 unit), or -1 when it nests deeper than `depth` levels
 * of objects or holds an array (then `serializeEvent` writes the line).
 */
function dataBound(value: unknown, depth: number): number {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return -1
  let total = 2
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key]
    total += key.length * 6 + 4
    if (typeof item === 'string') total += item.length * 6 + 2
    else if (typeof item === 'object' && item !== null) {
      if (depth === 0) return -1
      const inner = dataBound(item, depth - 1)
      if (inner < 0) return -1
      total += inner
    } else total += 24
  }
  return total
}

/**
 * Writes the line of a chunk event at `at`; returns where it ends, or -1
 * when the event needs `serializeEvent` (the block is then left as it was
 * for the caller: nothing was committed). Constant runs of bytes are copied
 * with `set` (a memcpy), not byte by byte.
 */
function encodeChunk(event: AnySessionEvent, out: Buffer, at: number): number {
  const { seq, time, data } = event
  if (!isPlainInteger(seq) || !isPlainInteger(time) || typeof data !== 'object' || data === null) return -1
  out.set(CHUNK_PREFIX, at)
  at = integer(out, at + CHUNK_PREFIX.length, seq)
  out.set(TIME, at)
  at += TIME.length
  // Chunks streamed within one millisecond share their time: its digits are kept.
  if (time !== lastTime) {
    lastTime = time
    lastTimeDigits = lastTimeBuffer.subarray(0, integer(lastTimeBuffer, 0, time))
  }
  out.set(lastTimeDigits, at)
  at += lastTimeDigits.length
  const record = data as { turn: unknown; step: unknown; chunk: Record<string, unknown> }
  const template = templateOf(record)
  if (template === undefined) {
    out.set(DATA, at)
    at = object(out, at + DATA.length, data as Record<string, unknown>, 2)
    if (at < 0) return -1
  } else {
    // `{"turn":T,"step":S,"chunk":{"type":…,"index":I,"<field>":"…"}}`, the order JSON.stringify keeps.
    out.set(DATA_TURN, at)
    at = integer(out, at + DATA_TURN.length, record.turn as number)
    out.set(STEP, at)
    at = integer(out, at + STEP.length, record.step as number)
    out.set(template.head, at)
    at = integer(out, at + template.head.length, record.chunk.index as number)
    out.set(template.field, at)
    at = string(out, at + template.field.length, record.chunk[template.key] as string)
    out[at++] = CLOSE
    out[at++] = CLOSE
  }
  out[at] = CLOSE
  return at + 1
}

/** The bytes around a chunk of one string field, in the documented key order. */
interface Template {
  /** `,"chunk":{"type":"…","index":` */
  readonly head: Buffer
  readonly key: string
  /** `,"<key>":` */
  readonly field: Buffer
}

const TEMPLATES: Readonly<Record<string, Template | undefined>> = Object.assign(Object.create(null), {
  'text-delta': template('text-delta', 'text'),
  'reasoning-delta': template('reasoning-delta', 'text'),
  'tool-call-delta': template('tool-call-delta', 'argumentsDelta'),
})

function template(type: string, key: string): Template {
  return { head: ascii(`,"chunk":{"type":"${type}","index":`), key, field: ascii(`,"${key}":`) }
}

/** The template of data `{ turn, step, chunk: { type, index, <string field> } }` exactly (key order included), or undefined. */
function templateOf(data: { turn: unknown; step: unknown; chunk: unknown }): Template | undefined {
  let n = 0
  for (const key in data) {
    if (key !== (n === 0 ? 'turn' : n === 1 ? 'step' : n === 2 ? 'chunk' : '')) return undefined
    n++
  }
  const chunk = data.chunk as Record<string, unknown>
  if (n !== 3 || !isPlainInteger(data.turn) || !isPlainInteger(data.step) || typeof chunk !== 'object' || chunk === null) return undefined
  const type = chunk.type
  const found = typeof type === 'string' ? TEMPLATES[type] : undefined
  if (found === undefined || !isPlainInteger(chunk.index) || typeof chunk[found.key] !== 'string') return undefined
  n = 0
  for (const key in chunk) {
    if (key !== (n === 0 ? 'type' : n === 1 ? 'index' : n === 2 ? found.key : '')) return undefined
    n++
  }
  return n === 3 ? found : undefined
}

let lastTime = -1
const lastTimeBuffer = Buffer.alloc(16)
let lastTimeDigits = lastTimeBuffer.subarray(0, 0)

function isPlainInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < MAX_PLAIN_INTEGER
}

/** A JSON object whose values are primitives, or (down to `depth` more levels) such objects; else -1. */
function object(out: Buffer, at: number, value: Record<string, unknown>, depth: number): number {
  out[at++] = OPEN
  let first = true
  for (const key in value) {
    const item = value[key]
    if (!first) out[at++] = COMMA
    first = false
    at = plainString(out, at, key)
    if (at < 0) return -1
    out[at++] = COLON
    switch (typeof item) {
      case 'string':
        at = string(out, at, item)
        break
      case 'number':
        if (!Number.isFinite(item)) return -1
        at = isPlainInteger(item) ? integer(out, at, item) : at + out.write(String(item), at, 'latin1')
        break
      case 'boolean':
        at = bytes(out, at, item ? TRUE : FALSE)
        break
      case 'object':
        if (item === null) at = bytes(out, at, NULL)
        else if (depth > 0 && !Array.isArray(item)) at = object(out, at, item as Record<string, unknown>, depth - 1)
        else return -1
        if (at < 0) return -1
        break
      default:
        // undefined, a function or a symbol: JSON.stringify would drop the key.
        return -1
    }
  }
  out[at++] = CLOSE
  return at
}

/** A string as JSON: its bytes when it is printable ASCII with no quote or backslash, else `JSON.stringify`'s text. */
function string(out: Buffer, at: number, value: string): number {
  const plain = plainString(out, at, value)
  return plain >= 0 ? plain : at + out.write(JSON.stringify(value), at, 'utf8')
}

/** Writes `"value"` when every character is printable ASCII other than `"` and `\`; -1 (nothing meaningful written) otherwise. */
function plainString(out: Buffer, at: number, value: string): number {
  out[at++] = QUOTE
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code < 0x20 || code > 0x7e || code === QUOTE || code === BACKSLASH) return -1
    out[at++] = code
  }
  out[at++] = QUOTE
  return at
}

/** A non-negative integer below 1e15, in decimal (what `String` gives). */
function integer(out: Buffer, at: number, value: number): number {
  if (value <= 0x7fffffff) return small(out, at, value)
  // Above 31 bits (a time in ms): the high digits, then the low eight, zero-padded; each part fits 31 bits.
  const high = Math.floor(value / 1e8)
  let low = value - high * 1e8
  at = small(out, at, high)
  for (let end = at + 7; end >= at; end--) {
    const next = (low / 10) | 0
    out[end] = 48 + low - next * 10
    low = next
  }
  return at + 8
}

/** A 31-bit non-negative integer, in decimal. */
function small(out: Buffer, at: number, value: number): number {
  const digits =
    value < 1e5
      ? value < 10 ? 1 : value < 100 ? 2 : value < 1e3 ? 3 : value < 1e4 ? 4 : 5
      : value < 1e6 ? 6 : value < 1e7 ? 7 : value < 1e8 ? 8 : value < 1e9 ? 9 : 10
  let end = at + digits
  do {
    const next = (value / 10) | 0
    out[--end] = 48 + value - next * 10
    value = next
  } while (value !== 0)
  return at + digits
}

function bytes(out: Buffer, at: number, word: Buffer): number {
  for (let i = 0; i < word.length; i++) out[at + i] = word[i]!
  return at + word.length
}
