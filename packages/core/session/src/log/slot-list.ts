import { SessionError } from '../errors'
import type { AnySessionEvent } from '../types'
import { emptyList } from './lists'

/** One log entry as stored: the event object, or the index of a packed `assistant/chunk` in the log's `ChunkPack`. */
export type Slot = AnySessionEvent | number

/** Runs are a log's streamed steps (more when a listener appends between chunks): a few per session. */
const INITIAL_RUNS = 16

/**
 * A log's entries by seq (`Slot`: the event object, or the index of a packed
 * chunk in the log's `ChunkPack`), with packed chunks kept as runs instead of
 * one entry each.
 *
 * Why: nearly every entry of a streamed answer is a packed chunk, and
 * consecutive chunks get consecutive seqs and consecutive pack indices. As an
 * array of entries, a 100,000-chunk answer needed an 800 KB list, regrown by
 * copying in V8's large-object space: fresh memory on every growth (about
 * 600 page faults, half of a streaming round's, at ~13 µs each on the bench's
 * VM), and 8 bytes or more kept per chunk. Here a run of packed entries is 16
 * bytes however long it is; only the other entries (events kept as objects,
 * and chunks between their commit and their packing) are in a list.
 *
 * Contract: `get(seq)` is the entry last stored at `seq` (`put`, `packAt`,
 * `pushPacked`), for every integer `0 ≤ seq < count`, and `undefined` past
 * the end. Entries are stored in seq order: `put` at `count` appends;
 * `put` below `count` replaces an object entry; `packAt` turns an object
 * entry into a packed one. A packed entry is never replaced.
 */
export class SlotList {
  /** The number of entries. */
  count = 0
  /** The object entries, in seq order (every entry that is not in a run). */
  private objects: AnySessionEvent[] = emptyList<AnySessionEvent>(OBJECT_SAMPLE)
  /**
   * The runs, in seq order: run `r` holds the entries `runSeqs[r]` to
   * `runSeqs[r] + runLengths[r] - 1`, whose packed indices start at
   * `runIndices[r]` and go up by one; `runBefore[r]` is how many packed
   * entries come before it. Columns (a run is 16 bytes), doubled when full.
   *
   * Run 0 is an empty run at seq 0, so every seq has a run starting at or
   * before it: the paths of a list's first packed chunk are those of every
   * later one. (A branch taken only by a new list's first chunk ran, in the
   * process's first session, before V8 kept feedback for these functions,
   * and deoptimized them at the first chunk of every later session.)
   */
  private runSeqs = new Int32Array(INITIAL_RUNS)
  private runIndices = new Int32Array(INITIAL_RUNS)
  private runLengths = new Int32Array(INITIAL_RUNS)
  private runBefore = new Int32Array(INITIAL_RUNS)
  private runCount = 1
  /** The run `runOf` last answered: readers mostly go through the log in order, writers at its end. */
  private lastRun = 0
  /** The seq and the packed index that would extend the last run (`packAt`'s common case); kept by `addPacked`. */
  private tailSeq = 0
  private tailIndex = 0

  /** The entry at `seq` (an integer ≥ 0), or `undefined` past the end. */
  get(seq: number): Slot | undefined {
    if (seq >= this.count) return undefined
    const r = this.runOf(seq)
    const into = seq - this.runSeqs[r]!
    const length = this.runLengths[r]!
    return into < length ? this.runIndices[r]! + into : this.objects[seq - this.runBefore[r]! - length]
  }

  /** Whether the entry at `seq` is an `assistant/chunk` (packed or not); false for anything but an entry's seq. */
  isChunk(seq: number): boolean {
    if (!Number.isInteger(seq) || seq < 0) return false
    const slot = this.get(seq)
    return typeof slot === 'number' || slot?.type === 'assistant/chunk'
  }

  /** Stores the event object `event` at `seq`: appended when `seq` is `count`, else replacing the object entry there. */
  put(seq: number, event: AnySessionEvent): void {
    if (seq === this.count) {
      this.objects.push(event)
      this.count = seq + 1
      return
    }
    this.objects[this.objectAt(this.runOf(seq), seq)] = event
  }

  /** Appends a packed entry: the chunk at `index` in the pack. */
  pushPacked(index: number): void {
    const seq = this.count++
    this.addPacked(this.runOf(seq), seq, index)
  }

  /** Turns the object entry at `seq` (a chunk just packed) into the packed entry `index`. */
  packAt(seq: number, index: number): void {
    // A streamed chunk, packed once published: the newest entry, continuing the last run in seqs and indices. The last
    // run ends just before it and it is the last entry, so it is the last object entry, and only the run's length moves.
    if (seq === this.tailSeq && index === this.tailIndex && seq === this.count - 1) {
      this.objects.pop()
      const last = this.runCount - 1
      this.runLengths[last]!++
      this.tailSeq = seq + 1
      this.tailIndex = index + 1
      this.lastRun = last
      return
    }
    const r = this.runOf(seq)
    const position = this.objectAt(r, seq)
    const objects = this.objects
    // The chunk packed is nearly always the last object entry (a publication's re-entrant appends may follow it).
    if (position === objects.length - 1) objects.pop()
    else objects.splice(position, 1)
    this.addPacked(r, seq, index)
  }

  /** A new list of the first `count` entries. */
  slice(count: number): SlotList {
    const copy = new SlotList()
    for (let seq = 0; seq < count; seq++) {
      const slot = this.get(seq)!
      if (typeof slot === 'number') copy.pushPacked(slot)
      else copy.put(seq, slot)
    }
    return copy
  }

  /** The position in `objects` of the object entry at `seq` (`r`: `runOf(seq)`); a packed one, or none, is an internal error (`INVARIANT`). */
  private objectAt(r: number, seq: number): number {
    const into = seq - this.runSeqs[r]!
    const length = this.runLengths[r]!
    if (seq >= this.count || into < length) throw notAnObjectEntry(seq, seq < this.count)
    return seq - this.runBefore[r]! - length
  }

  /**
   * Records `seq` as packed at `index`, no longer an object entry: `r` is the
   * last run starting at or before `seq`, which it extends when it continues
   * both its seqs and its indices; else a new run follows `r`. Both cases go
   * through the same loads and stores (see `runSeqs`); only a new run in the
   * middle (a replayed log whose later chunks are packed already) takes a
   * path of its own.
   */
  private addPacked(r: number, seq: number, index: number): void {
    const start = this.runSeqs[r]!
    const first = this.runIndices[r]!
    const length = this.runLengths[r]!
    const before = this.runBefore[r]!
    const after = before + length
    const extend = start + length === seq && first + length === index
    const next = r + 1
    const at = extend ? r : next
    // Both tests run for every chunk (no short-circuit): a test met only by a list's first chunk has no feedback.
    const inside = at < this.runCount
    const full = at === this.runSeqs.length
    if (!extend && inside) this.openRun(at)
    else if (full) this.growRuns()
    this.runSeqs[at] = extend ? start : seq
    this.runIndices[at] = extend ? first : index
    this.runLengths[at] = extend ? length + 1 : 1
    this.runBefore[at] = extend ? before : after
    const count = this.runCount
    const more = count + 1
    const total = extend ? count : more
    this.runCount = total
    for (let k = at + 1; k < total; k++) this.runBefore[k]!++
    this.lastRun = at
    const tail = total - 1
    this.tailSeq = this.runSeqs[tail]! + this.runLengths[tail]!
    this.tailIndex = this.runIndices[tail]! + this.runLengths[tail]!
  }

  /** Moves the runs from `at` on up by one (their `runBefore` is raised by `addPacked`). */
  private openRun(at: number): void {
    if (this.runCount === this.runSeqs.length) this.growRuns()
    const count = this.runCount
    this.runSeqs.copyWithin(at + 1, at, count)
    this.runIndices.copyWithin(at + 1, at, count)
    this.runLengths.copyWithin(at + 1, at, count)
    this.runBefore.copyWithin(at + 1, at, count)
  }

  /** The last run that starts at or before `seq` (an entry's seq: run 0 starts at 0). */
  private runOf(seq: number): number {
    const starts = this.runSeqs
    const count = this.runCount
    const last = this.lastRun
    if (last < count && starts[last]! <= seq && (last + 1 === count || seq < starts[last + 1]!)) return last
    let lo = 0
    let hi = count - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1
      if (starts[mid]! <= seq) lo = mid
      else hi = mid - 1
    }
    return (this.lastRun = lo)
  }

  private growRuns(): void {
    const capacity = this.runSeqs.length * 2
    this.runSeqs = grown(this.runSeqs, capacity)
    this.runIndices = grown(this.runIndices, capacity)
    this.runLengths = grown(this.runLengths, capacity)
    this.runBefore = grown(this.runBefore, capacity)
  }
}

/** The internal error of a write to an entry that is not an object entry (apart: the functions that meet it stay small enough to inline). */
function notAnObjectEntry(seq: number, packed: boolean): SessionError {
  const reason = packed ? `the log's entry at seq ${seq} is a packed chunk and cannot be replaced` : `the log has no entry at seq ${seq} to replace`
  return new SessionError('INVARIANT', `internal: ${reason}`, { seq })
}

function grown(from: Int32Array, capacity: number): Int32Array<ArrayBuffer> {
  const to = new Int32Array(capacity)
  to.set(from)
  return to
}

/** An object standing for an event, only to give the object list the elements kind of objects (`lists.ts`). */
const OBJECT_SAMPLE = Object.freeze({}) as unknown as AnySessionEvent
