import type { AnySessionEvent } from '../types'
import type { PackedLog } from './slots'

/** A callback of `forEach`, `map`, `find`, …, as `Array`'s methods call it. */
export type Visit = (event: AnySessionEvent, seq: number, events: readonly AnySessionEvent[]) => unknown

/**
 * The state of one events view (`createEventsView`) and the reads every one
 * of its methods is built from: the entry at a seq, a search by identity,
 * and the first entry a callback accepts.
 *
 * A packed entry is rebuilt on each read, except that the last one read is
 * kept and handed out again while it is read again (`events[i]` twice in a
 * row gives the same object). The identity searches skip packed entries,
 * which no outside object can be, except that kept one.
 */
export class ViewReader {
  /** The view itself: what the callbacks receive as their third argument (set once its proxy exists). */
  view!: readonly AnySessionEvent[]
  /** The event `first` last accepted: the object the callback saw (a packed entry read again would be a new one). */
  found: AnySessionEvent | undefined
  private cachedSeq = -1
  private cached: AnySessionEvent | undefined

  constructor(readonly log: PackedLog) {}

  /** The event at `seq` (an integer ≥ 0), or `undefined` past the end. */
  at(seq: number): AnySessionEvent | undefined {
    const log = this.log
    if (seq >= log.length) return undefined
    const slot = log.slots.get(seq)
    if (typeof slot !== 'number') return slot
    if (seq !== this.cachedSeq) {
      this.cached = log.pack!.event(slot, seq)
      this.cachedSeq = seq
    }
    return this.cached
  }

  /** The first seq from `from` towards `to` (exclusive) whose entry is `value` itself, or -1. */
  search(value: unknown, from: number, to: number, step: 1 | -1): number {
    const slots = this.log.slots
    for (let seq = from; seq !== to; seq += step) {
      const slot = slots.get(seq)
      if (typeof slot === 'number' ? seq === this.cachedSeq && value === this.cached : slot === value) return seq
    }
    return -1
  }

  /** The first seq from `from` towards `to` (exclusive) whose event `visit` accepts (kept in `found`), or -1. */
  first(visit: Visit, thisArg: unknown, from: number, to: number, step: 1 | -1): number {
    const view = this.view
    for (let seq = from; seq !== to; seq += step) {
      const event = this.at(seq)!
      if (visit.call(thisArg, event, seq, view)) {
        this.found = event
        return seq
      }
    }
    this.found = undefined
    return -1
  }
}
