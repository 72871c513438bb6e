/**
 * The seqs of one step's `assistant/chunk` events, in the order they were
 * logged, for the step's `assistant/message` anchor (`chunkSeqs`).
 *
 * Kept as a run while the seqs are consecutive (nothing else was logged
 * between two chunks: the usual case), and as a list from the first gap on.
 * Why: a long answer streams tens of thousands of chunks, and a list grown by
 * `push` is copied into a fresh backing store half again as large each time
 * it fills, in V8's large-object space once past about 16,000 elements: about
 * 2.4 MB of freshly mapped memory for 100,000 chunks, about 730 page faults
 * per such step, which on a virtual machine cost more than the rest of the
 * list's work. A run costs nothing per chunk; the anchor's exact-size array is
 * built once (`toArray`), as the copy the anchor logged before.
 */
export class ChunkSeqs {
  /** The first seq of the run, and how many consecutive seqs it holds (while `list` is undefined). */
  private first = 0
  private count = 0
  /** Every seq, once they stopped being consecutive. */
  private list: number[] | undefined = undefined

  /** How many seqs were recorded. */
  get length(): number {
    return this.list === undefined ? this.count : this.list.length
  }

  push(seq: number): void {
    const count = this.count
    // The run's first seq is written on every push (the same value after the
    // first), not in a branch of its own: a branch taken only by a step's
    // first chunk ran, in the process's first step, before V8 kept feedback
    // for it, and deoptimized this function (inlined in the loop's chunk sink)
    // at the first chunk of every later step's stream.
    const first = count === 0 ? seq : this.first
    if (this.list === undefined && seq === first + count) {
      this.first = first
      this.count = count + 1
    } else {
      this.pushApart(seq)
    }
  }

  /** A seq after a gap (or after one): the seqs are kept as a list from then on. */
  private pushApart(seq: number): void {
    const list = this.list
    if (list !== undefined) {
      list.push(seq)
      return
    }
    const all = this.copy()
    all.push(seq)
    this.list = all
  }

  /**
   * A new frozen array of the seqs, in order: the anchor's `chunkSeqs`, which
   * the log keeps, frozen. Frozen here because the log freezes what it is
   * handed by walking every element of an array that is not frozen yet (any
   * element could be an unfrozen object): for a 100,000-chunk step, a walk of
   * 100,000 numbers at the step's end, whose loop V8 compiles on the spot and
   * which deoptimized that freezing function in the cold round. A frozen array
   * is skipped whole. (Typed `number[]`, as the anchor's field is.)
   */
  toArray(): number[] {
    return Object.freeze(this.copy()) as number[]
  }

  /** A new (unfrozen) array of the seqs, in order. */
  private copy(): number[] {
    if (this.list !== undefined) return this.list.slice()
    const count = this.count
    const first = this.first
    const seqs: number[] = []
    // A long run: one allocation of the exact size (fast holey elements, no hole left); a short one grows as a literal would.
    if (count > 16) seqs.length = count
    for (let i = 0; i < count; i++) seqs[i] = first + i
    return seqs
  }
}
