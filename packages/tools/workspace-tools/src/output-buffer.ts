/**
 * A command's output, bounded: the first half of `maxBytes` and the last
 * half are kept, whatever came between is counted and dropped. Memory stays
 * at about `maxBytes` however much a command prints. The text is cut on
 * UTF-8 character boundaries and says how much was cut, so the model sees
 * both how a command started and how it ended (where errors and summaries
 * usually are).
 */
export class OutputBuffer {
  private readonly headLimit: number
  private readonly tailLimit: number
  private readonly head: Buffer[] = []
  private headBytes = 0
  private tail: Buffer[] = []
  private tailBytes = 0
  /** Every byte the command printed. */
  total = 0

  constructor(maxBytes: number) {
    this.headLimit = Math.floor(maxBytes / 2)
    this.tailLimit = maxBytes - this.headLimit
  }

  push(chunk: Buffer): void {
    this.total += chunk.length
    let rest = chunk
    if (this.headBytes < this.headLimit) {
      const take = Math.min(rest.length, this.headLimit - this.headBytes)
      this.head.push(rest.subarray(0, take))
      this.headBytes += take
      rest = rest.subarray(take)
    }
    if (rest.length === 0) return
    this.tail.push(rest)
    this.tailBytes += rest.length
    // Drop whole chunks from the front while what remains still fills the tail.
    while (this.tail.length > 1 && this.tailBytes - this.tail[0]!.length >= this.tailLimit) this.tailBytes -= this.tail.shift()!.length
  }

  /** The kept output as text, with `[… N bytes cut from the middle …]` where bytes were dropped; ANSI escapes removed. */
  text(): string {
    const head = Buffer.concat(this.head)
    let tail = Buffer.concat(this.tail)
    if (this.total <= this.headLimit + this.tailLimit) return stripAnsi(Buffer.concat([head, tail]).toString('utf8'))
    if (tail.length > this.tailLimit) tail = tail.subarray(tail.length - this.tailLimit)
    const headEnd = characterStart(head, head.length)
    let tailStart = 0
    while (tailStart < tail.length && isContinuation(tail[tailStart]!)) tailStart++
    const cut = this.total - headEnd - (tail.length - tailStart)
    return stripAnsi(
      `${head.subarray(0, headEnd).toString('utf8')}\n[… ${cut} bytes cut from the middle of the output …]\n${tail.subarray(tailStart).toString('utf8')}`,
    )
  }
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80
}

/** The index where the character containing byte `end - 1` starts, if it is incomplete before `end`; else `end`. */
function characterStart(bytes: Buffer, end: number): number {
  let start = end
  while (start > 0 && isContinuation(bytes[start - 1]!)) start--
  if (start === 0) return end
  const lead = bytes[start - 1]!
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
  return end - (start - 1) >= length ? end : start - 1
}

/**
 * Removes terminal escape sequences (colours, cursor moves, titles): they
 * cost tokens and mean nothing to the model. A scan, not a regular
 * expression, so a hostile output cannot make it slow.
 */
export function stripAnsi(text: string): string {
  if (!text.includes('\u001b')) return text
  let out = ''
  let i = 0
  while (i < text.length) {
    const char = text[i]!
    if (char !== '\u001b') {
      out += char
      i++
      continue
    }
    const next = text[i + 1]
    if (next === '[') {
      // CSI: parameters and intermediates, then one final byte in @..~.
      i += 2
      while (i < text.length && !(text.charCodeAt(i) >= 0x40 && text.charCodeAt(i) <= 0x7e)) i++
      i++
    } else if (next === ']') {
      // OSC: up to BEL or ESC \.
      i += 2
      while (i < text.length && text[i] !== '\u0007' && !(text[i] === '\u001b' && text[i + 1] === '\\')) i++
      i += text[i] === '\u0007' ? 1 : 2
    } else {
      i += 2
    }
  }
  return out
}
