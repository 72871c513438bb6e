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
const TRUE = ascii('true')
const FALSE = ascii('false')
const NULL = ascii('null')

/**
 * Serialized events waiting to be written: one line per event, in blocks of
 * bytes (each a `Buffer` of 64 KiB, filled in order), so the write-behind
 * queue never holds a string per event and a batch is written without
 * joining strings and encoding them again.
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

  private readonly blocks: Buffer[] = []
  private current: Buffer | undefined
  private used = 0

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

  /** Takes everything queued, in order, as blocks to write, with the number of lines it holds. */
  take(): { blocks: Buffer[]; lines: number } {
    this.close()
    const blocks = this.blocks.splice(0)
    const lines = this.lines
    this.lines = 0
    this.bytes = 0
    return { blocks, lines }
  }

  /** Drops everything queued. */
  clear(): void {
    this.take()
  }

  /** Makes room for `bound` bytes in the current block and returns where they start. */
  private reserve(bound: number): number {
    if (this.current === undefined || this.used + bound > this.current.length) {
      this.close()
      this.current = Buffer.allocUnsafeSlow(Math.max(BLOCK_BYTES, bound))
      this.used = 0
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

  /** Moves the current block, as far as it is filled, to the queue of blocks. */
  private close(): void {
    if (this.current === undefined || this.used === 0) return
    this.blocks.push(this.current.subarray(0, this.used))
    // The rest of the block takes the next lines (the part taken is only read from now on).
    this.current = this.current.length - this.used >= 4096 ? this.current.subarray(this.used) : undefined
    this.used = 0
  }
}

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
 * for the caller: nothing was committed).
 */
function encodeChunk(event: AnySessionEvent, out: Buffer, at: number): number {
  const { seq, time, data } = event
  if (!isPlainInteger(seq) || !isPlainInteger(time) || typeof data !== 'object' || data === null) return -1
  at = bytes(out, at, CHUNK_PREFIX)
  at = integer(out, at, seq)
  at = bytes(out, at, TIME)
  at = integer(out, at, time)
  at = bytes(out, at, DATA)
  at = object(out, at, data as Record<string, unknown>, 2)
  if (at < 0) return -1
  out[at] = CLOSE
  return at + 1
}

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

function integer(out: Buffer, at: number, value: number): number {
  if (value < 10) {
    out[at] = 48 + value
    return at + 1
  }
  let digits = 0
  for (let rest = value; rest >= 1; rest = Math.floor(rest / 10)) digits++
  let end = at + digits
  for (let rest = value; end > at; rest = Math.floor(rest / 10)) out[--end] = 48 + (rest % 10)
  return at + digits
}

function bytes(out: Buffer, at: number, word: Buffer): number {
  for (let i = 0; i < word.length; i++) out[at + i] = word[i]!
  return at + word.length
}
