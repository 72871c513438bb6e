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
    const list = this.list
    if (list !== undefined) {
      list.push(seq)
    } else if (this.count === 0) {
      this.first = seq
      this.count = 1
    } else if (seq === this.first + this.count) {
      this.count++
    } else {
      const all = this.toArray()
      all.push(seq)
      this.list = all
    }
  }

  /** A new array of the seqs, in order (the anchor's `chunkSeqs`: the log keeps it). */
  toArray(): number[] {
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
