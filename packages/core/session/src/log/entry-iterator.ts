import type { AnySessionEvent } from '../types'
import { eventAt, type PackedLog } from './slots'

/**
 * Iterates the entries of a packed log (`events.values()`, `for…of`), live
 * like an array iterator: entries appended meanwhile are visited. Packed
 * chunks are rebuilt one at a time, as they are reached.
 */
export class EntryIterator implements IterableIterator<AnySessionEvent> {
  private seq = 0
  constructor(private readonly log: PackedLog) {}

  next(): IteratorResult<AnySessionEvent> {
    const seq = this.seq
    if (seq >= this.log.length) return { value: undefined, done: true }
    this.seq = seq + 1
    return { value: eventAt(this.log, seq)!, done: false }
  }

  [Symbol.iterator](): IterableIterator<AnySessionEvent> {
    return this
  }
}
