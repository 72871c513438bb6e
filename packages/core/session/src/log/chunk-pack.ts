import { freezeChunk, Shape } from './chunk-shape'
import { newEnvelope } from './envelope'
import { emptyList } from './lists'
import type { AnySessionEvent } from '../types'

const INITIAL_CAPACITY = 1024
/** Runs are a pack's steps (more when the clock jumps): a few per session, more in a long one. */
const INITIAL_RUNS = 16
/**
 * A page is sealed (joined into one flat string) once it holds this many
 * characters or parts. 4,096 parts, not more: on Node 20 a join of 16,384
 * short strings costs about ten times more per string than joins of 4,096.
 */
const PAGE_CHARACTERS = 1 << 18
const PAGE_PARTS = 1 << 12
/** The initial size of the byte stage of `addParts` (it grows to a page's worth when needed). */
const STAGE_BYTES = 1 << 16
/** `ToolCall` chunks keep the lengths of `id` and `name` in one 32-bit column. */
const MAX_ID_LENGTH = 0x7fff
const MAX_NAME_LENGTH = 0xffff
/** Block indices are kept in 16 bits; a chunk with a larger one stays an object. */
const MAX_INDEX = 0xffff
/** A chunk's time offset from its run's base is kept in 16 bits: a later chunk (about 65 s on) starts a new run. */
const MAX_DELTA = 0xffff
/** The `indices` entry of an `Object` chunk (which has no block index): a `usage` chunk. */
const USAGE = 0
/** The `indices` entry of an `Object` chunk: a `finish` chunk. */
const FINISH = 1

/**
 * `assistant/chunk` events kept as columns instead of objects: what lets a
 * session hold a million chunks in a few tens of megabytes (spec §13: ≤ 200
 * bytes per logged event, ≤ 300 MB to resume a 1,000,000-event session).
 *
 * As objects, one chunk event is four V8 objects (envelope, data, chunk, the
 * boxed `time`), its strings and an array slot: about 200 bytes without
 * pointer compression. Here it is 9 bytes of typed-array columns plus its
 * characters, which are stored with the neighbouring chunks' in one flat
 * string per page:
 *
 * - consecutive chunks of one step form a run, which holds the turn, the
 *   step and a base time once; a chunk keeps its time as a whole-millisecond
 *   offset from its run's base (16 bits; a time that does not fit starts a
 *   new run, so every time is kept exactly);
 * - per chunk: that offset, its shape (8 bits), its block index (16 bits),
 *   and where its characters end in its page; the few chunks with a split
 *   (the shapes with two or three strings) keep it apart (`splits`), so a
 *   text delta costs no split column;
 * - a `usage` or `finish` chunk keeps only its `usage` or `reason` object
 *   (`objects`), which the step's anchor holds anyway.
 *
 * Only chunks of a documented shape (`chunk-shape.ts`) are packed, so
 * `event(i, seq)` rebuilds exactly the event that was packed: the same keys
 * in the same order, the same values, deep-frozen. It is a new object on each
 * call. The pack is append-only; a loaded log and the session replayed from
 * it may share one.
 */
export class ChunkPack {
  /** The number of chunks packed. */
  count = 0

  private declare capacity: number
  /** The time, in ms after the base of the chunk's run. */
  private declare offsets: Uint16Array<ArrayBuffer>
  private declare shapes: Uint8Array<ArrayBuffer>
  private declare indices: Uint16Array<ArrayBuffer>
  /** Where the chunk's characters end in its page (they start where the previous chunk's end). */
  private declare ends: Int32Array<ArrayBuffer>
  /** A page is sealed once it holds this many parts (`PAGE_PARTS`; fewer only in `chunk-feedback.ts`'s throwaway pack). */
  private declare readonly pageParts: number
  /**
   * The splits that are not 0, by chunk: `SignedReasoning`: the text's
   * length; `ToolCall`: `id` length × 65536 + `name` length. Every other
   * shape's split is 0. Apart from the columns because nearly every chunk is
   * a text delta: a column of splits was 4 of a chunk's 15 bytes, and fresh
   * memory on every growth.
   */
  private readonly splits = new Map<number, number>()

  /**
   * Runs of consecutive chunks of one step: the first chunk of each, its
   * turn, step and base time (ms); the first `runCount` entries are in use.
   * Columns, as the chunks' are (turns and steps are ordinals below 2³¹,
   * `chunkDataShape`): written by index on every chunk (see `addEntry`),
   * doubled by a copy when full, 20 bytes per run.
   */
  private runStarts = new Int32Array(INITIAL_RUNS)
  private runTurns = new Int32Array(INITIAL_RUNS)
  private runSteps = new Int32Array(INITIAL_RUNS)
  private runTimes = new Float64Array(INITIAL_RUNS)
  private runCount = 0
  /**
   * What an `Object` chunk holds, in pack order: its `usage` or its `reason`
   * object (frozen), not the chunk itself. The chunk (`{ type, usage }` or
   * `{ type, reason }`, told apart by the chunk's `indices` entry: `USAGE` or
   * `FINISH`) is rebuilt on read, as every packed chunk is, around that same
   * object. Why: the anchor (`assistant/message`) already keeps the usage and
   * the reason, so the log kept per step two 40-byte chunk objects and two map
   * entries only to answer a read of a packed chunk. `objectChunks` holds the
   * pack index of each, ascending, so a read finds its object by a binary
   * search instead of a map entry per chunk.
   */
  private readonly objects: object[] = emptyList<object>(Object.prototype)
  private objectChunks = new Int32Array(INITIAL_RUNS)

  private readonly pages: string[] = emptyList('')
  /** The index of the first chunk of each page. */
  private readonly pageStarts: number[] = []
  /** The page being filled, as parts; `pendingStart` is its first chunk. */
  private pending: string[] = emptyList('')
  private pendingLength = 0
  private pendingStart = 0
  /** ASCII bytes appended since the last string part (`addParts`), turned into one part when needed. */
  private stage: Buffer | undefined
  private staged = 0
  private lastRun = 0
  private lastPage = 0
  /** The last run's turn, step and base time (no time before the first run, so that no chunk continues it): `addEntry`'s test for a chunk that continues it. */
  private tailTurn = 0
  private tailStep = 0
  private tailTime = Number.NaN

  /** `capacity` and `pageParts` are the defaults except for `chunk-feedback.ts`, whose pack grows and seals pages within a few chunks. */
  constructor(capacity = INITIAL_CAPACITY, pageParts = PAGE_PARTS) {
    this.capacity = capacity
    this.offsets = new Uint16Array(capacity)
    this.shapes = new Uint8Array(capacity)
    this.indices = new Uint16Array(capacity)
    this.ends = new Int32Array(capacity)
    this.pageParts = pageParts
  }

  /**
   * Packs one chunk whose data had shape `shape` (`chunkDataShape`), at
   * `time`. Returns its index, or `-1` when it does not fit the columns (a
   * block index above 65535, a very long tool call id or name), in which case
   * nothing changed and the caller keeps the event as an object. The strings
   * are copied into the pack; `chunk` is not kept, except for `Shape.Object`,
   * which keeps the chunk (frozen).
   */
  add(turn: number, step: number, time: number, chunk: Record<string, any>, shape: Shape): number {
    switch (shape) {
      case Shape.Text:
      case Shape.Reasoning:
        return this.addStrings(turn, step, time, shape, chunk.index, chunk.text)
      case Shape.SignedReasoning:
        return this.addStrings(turn, step, time, shape, chunk.index, chunk.text, chunk.signature)
      case Shape.ToolArguments:
        return this.addStrings(turn, step, time, shape, chunk.index, chunk.argumentsDelta)
      case Shape.RedactedReasoning:
        return this.addStrings(turn, step, time, shape, chunk.index, chunk.data)
      case Shape.ToolCall:
        return this.addStrings(turn, step, time, shape, chunk.index, chunk.id, chunk.name, chunk.argumentsDelta)
      default: {
        freezeChunk(chunk, shape)
        const finish = chunk.type === 'finish'
        const objects = this.objects
        const n = objects.length
        if (n === this.objectChunks.length) this.objectChunks = grown(this.objectChunks, new Int32Array(n * 2))
        objects.push(finish ? chunk.reason : chunk.usage)
        this.objectChunks[n] = this.count
        return this.addEntry(turn, step, time, shape, finish ? FINISH : USAGE, 0)
      }
    }
  }

  /**
   * Packs a chunk of a string shape from its fields: `first` is the text (or
   * the arguments, or the tool call id), `second` and `third` the signature,
   * or the name and the arguments. Same result as `add`.
   */
  addStrings(turn: number, step: number, time: number, shape: Shape, index: number, first: string, second?: string, third?: string): number {
    const split = splitOf(shape, index, first.length, second?.length ?? 0)
    if (split < 0) return -1
    this.text(first)
    if (second !== undefined) this.text(second)
    if (third !== undefined) this.text(third)
    return this.addEntry(turn, step, time, shape, index, split)
  }

  /**
   * Packs a chunk of a string shape from up to three parts, each a string
   * (`texts[i]`) or, when `texts[i]` is undefined, the ASCII bytes
   * `source[starts[i], ends[i])` (copied into the page without building a
   * string per chunk). Same result as `addStrings` with the decoded strings.
   */
  addParts(
    turn: number,
    step: number,
    time: number,
    shape: Shape,
    index: number,
    count: number,
    texts: readonly (string | undefined)[],
    source: Buffer,
    starts: readonly number[],
    ends: readonly number[],
  ): number {
    // No closure here: a function created per call costs more than the rest (and tsx wraps each in `__name`).
    const first = texts[0]?.length ?? ends[0]! - starts[0]!
    const second = count > 1 ? (texts[1]?.length ?? ends[1]! - starts[1]!) : 0
    const split = splitOf(shape, index, first, second)
    if (split < 0) return -1
    for (let i = 0; i < count; i++) {
      const text = texts[i]
      if (text !== undefined) this.text(text)
      else this.bytes(source, starts[i]!, ends[i]!)
    }
    return this.addEntry(turn, step, time, shape, index, split)
  }

  /** Joins the pending page into one flat string (so its chunks no longer hold their own strings). */
  seal(): void {
    if (this.pendingStart === this.count) return
    this.unstage()
    this.pages.push(this.pending.length === 1 ? this.pending[0]! : this.pending.join(''))
    this.pageStarts.push(this.pendingStart)
    // With the elements kind of strings (`lists.ts`): an empty literal would change class on its first part.
    this.pending = emptyList('')
    this.pendingLength = 0
    this.pendingStart = this.count
  }

  /** A cursor for reading the turn and step of chunks in increasing order (a replay). */
  runCursor(): { turnOf(i: number): number; stepOf(i: number): number } {
    let run = 0
    const seek = (i: number) => {
      if (i < this.runStarts[run]! || (run + 1 < this.runCount && i >= this.runStarts[run + 1]!)) run = this.runOf(i)
      return run
    }
    return {
      turnOf: (i) => this.runTurns[seek(i)]!,
      stepOf: (i) => this.runSteps[seek(i)]!,
    }
  }

  /** The `assistant/chunk` event of packed chunk `i`, at `seq`: a new deep-frozen object. */
  event(i: number, seq: number): AnySessionEvent {
    if (i >= this.pendingStart) this.seal()
    const page = this.pageOf(i)
    const text = this.pages[page]!
    const start = i === this.pageStarts[page] ? 0 : this.ends[i - 1]!
    const end = this.ends[i]!
    const index = this.indices[i]!
    let chunk: object
    switch (this.shapes[i] as Shape) {
      case Shape.Text:
        chunk = Object.freeze({ type: 'text-delta', index, text: text.slice(start, end) })
        break
      case Shape.Reasoning:
        chunk = Object.freeze({ type: 'reasoning-delta', index, text: text.slice(start, end) })
        break
      case Shape.SignedReasoning: {
        const middle = start + this.storedSplit(i)
        chunk = Object.freeze({ type: 'reasoning-delta', index, text: text.slice(start, middle), signature: text.slice(middle, end) })
        break
      }
      case Shape.ToolArguments:
        chunk = Object.freeze({ type: 'tool-call-delta', index, argumentsDelta: text.slice(start, end) })
        break
      case Shape.RedactedReasoning:
        chunk = Object.freeze({ type: 'redacted-reasoning-delta', index, data: text.slice(start, end) })
        break
      case Shape.ToolCall: {
        const split = this.storedSplit(i)
        const idEnd = start + (split >>> 16)
        const nameEnd = idEnd + (split & 0xffff)
        chunk = Object.freeze({
          type: 'tool-call-delta',
          index,
          id: text.slice(start, idEnd),
          name: text.slice(idEnd, nameEnd),
          argumentsDelta: text.slice(nameEnd, end),
        })
        break
      }
      default: {
        const object = this.objects[lastAtMost(this.objectChunks, this.objects.length, i)]!
        chunk = index === FINISH ? Object.freeze({ type: 'finish', reason: object }) : Object.freeze({ type: 'usage', usage: object })
      }
    }
    const run = this.runOf(i)
    const data = Object.freeze({ turn: this.runTurns[run]!, step: this.runSteps[run]!, chunk })
    return newEnvelope('assistant/chunk', seq, this.runTimes[run]! + this.offsets[i]!, data)
  }

  private addEntry(turn: number, step: number, time: number, shape: Shape, index: number, split: number): number {
    const i = this.count
    if (i === this.capacity) this.grow()
    // Nearly every chunk continues the last run (same turn and step, a time that fits its offset column); only the
    // first chunk of a step, or one after a clock jump, starts a run. Both paths have feedback before this function
    // is optimized: `chunk-feedback.ts` packs several steps (a path first taken by a new pack's first chunk, in the
    // process's first session, would otherwise have none and deoptimize this function at the next session's first
    // chunk). `base + since` must give `time` back exactly: with a fractional time (a mocked clock, a loaded log) it
    // may not.
    let offset = time - this.tailTime
    if (
      turn !== this.tailTurn ||
      step !== this.tailStep ||
      offset < 0 ||
      offset > MAX_DELTA ||
      (offset | 0) !== offset ||
      this.tailTime + offset !== time
    ) {
      const run = this.runCount
      if (run === this.runStarts.length) this.growRuns()
      this.runStarts[run] = i
      this.runTurns[run] = turn
      this.runSteps[run] = step
      this.runTimes[run] = time
      this.runCount = run + 1
      this.tailTurn = turn
      this.tailStep = step
      this.tailTime = time
      offset = 0
    }
    this.count = i + 1
    this.offsets[i] = offset
    this.shapes[i] = shape
    this.indices[i] = index
    this.ends[i] = this.pendingLength
    if (split !== 0) this.splits.set(i, split)
    if (this.pendingLength >= PAGE_CHARACTERS || this.pending.length >= this.pageParts) this.seal()
    return i
  }

  private text(value: string): void {
    if (value.length === 0) return
    if (this.staged !== 0) this.unstage()
    this.pending.push(value)
    this.pendingLength += value.length
  }

  /** Appends ASCII bytes to the page (one character each). */
  private bytes(source: Buffer, start: number, end: number): void {
    const length = end - start
    if (length === 0) return
    let stage = this.stage
    if (stage === undefined || this.staged + length > stage.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(STAGE_BYTES, (this.staged + length) * 2))
      if (stage !== undefined) stage.copy(grown, 0, 0, this.staged)
      this.stage = stage = grown
    }
    let at = this.staged
    if (length > 32) {
      source.copy(stage, at, start, end)
      at += length
    } else {
      for (let i = start; i < end; i++) stage[at++] = source[i]!
    }
    this.staged = at
    this.pendingLength += length
  }

  /** Turns the staged bytes into one string part. */
  private unstage(): void {
    if (this.staged === 0) return
    this.pending.push(this.stage!.toString('latin1', 0, this.staged))
    this.staged = 0
  }

  /** The split kept for chunk `i` (see `splits`), 0 when none was kept. */
  private storedSplit(i: number): number {
    return this.splits.get(i) ?? 0
  }

  /** The run of chunk `i`; the last answer is tried first, since readers mostly go through the log in order. */
  private runOf(i: number): number {
    const starts = this.runStarts
    const count = this.runCount
    const last = this.lastRun
    if (last < count && starts[last]! <= i && (last + 1 === count || i < starts[last + 1]!)) return last
    return (this.lastRun = lastAtMost(starts, count, i))
  }

  /** The sealed page of chunk `i` (the last answer tried first, as for runs). */
  private pageOf(i: number): number {
    const starts = this.pageStarts
    const last = this.lastPage
    if (last < starts.length && starts[last]! <= i && (last + 1 === starts.length || i < starts[last + 1]!)) return last
    return (this.lastPage = lastAtMost(starts, starts.length, i))
  }

  /** Doubles the run columns (a pack's runs are its steps: rare). */
  private growRuns(): void {
    const capacity = this.runStarts.length * 2
    this.runStarts = grown(this.runStarts, new Int32Array(capacity))
    this.runTurns = grown(this.runTurns, new Int32Array(capacity))
    this.runSteps = grown(this.runSteps, new Int32Array(capacity))
    this.runTimes = grown(this.runTimes, new Float64Array(capacity))
  }

  private grow(): void {
    const capacity = this.capacity * 2
    this.offsets = grown(this.offsets, new Uint16Array(capacity))
    this.shapes = grown(this.shapes, new Uint8Array(capacity))
    this.indices = grown(this.indices, new Uint16Array(capacity))
    this.ends = grown(this.ends, new Int32Array(capacity))
    this.capacity = capacity
  }
}

/** The split of a string shape (0: none to keep), or -1 when the chunk does not fit the columns. */
function splitOf(shape: Shape, index: number, first: number, second: number): number {
  if (index < 0 || index > MAX_INDEX) return -1
  if (shape === Shape.SignedReasoning) return first
  if (shape === Shape.ToolCall) return first > MAX_ID_LENGTH || second > MAX_NAME_LENGTH ? -1 : first * 0x10000 + second
  return 0
}

/** The last position whose value is ≤ `value` among the first `count` of an ascending array whose first value is ≤ `value`. */
function lastAtMost(values: ArrayLike<number>, count: number, value: number): number {
  let lo = 0
  let hi = count - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1
    if (values[mid]! <= value) lo = mid
    else hi = mid - 1
  }
  return lo
}

function grown<T extends Int32Array | Uint8Array | Uint16Array | Float64Array>(from: T, to: T): T {
  to.set(from as never)
  return to
}
