import type { AnySessionEvent } from '../types'
import { callable, relativeIndex } from './array-index'
import { EntryIterator } from './entry-iterator'
import type { ViewReader, Visit } from './view-reader'

type Reduce = (sum: unknown, event: AnySessionEvent, seq: number, events: readonly AnySessionEvent[]) => unknown

/**
 * The `Array` methods an events view answers itself, called with the view's
 * reader as `this`. Each reads the slots directly, as `Array`'s own method
 * does on an array (the length is read once): `Array.prototype`'s versions
 * would read every entry through the proxy, which costs V8 a runtime call and
 * a key string per index. Results equal those of `Array.prototype`'s method
 * on the array of events.
 */
export const viewMethods: Readonly<Record<string, (this: ViewReader, ...args: any[]) => unknown>> = {
  at(this: ViewReader, index: unknown) {
    const length = this.log.length
    let n = Math.trunc(Number(index)) || 0
    if (n < 0) n += length
    return n >= 0 && n < length ? this.at(n) : undefined
  },
  slice(this: ViewReader, start?: unknown, end?: unknown) {
    const length = this.log.length
    const from = relativeIndex(start, length, 0)
    const to = relativeIndex(end, length, length)
    const out: AnySessionEvent[] = []
    for (let seq = from; seq < to; seq++) out.push(this.at(seq)!)
    return out
  },
  indexOf(this: ViewReader, value: unknown, fromIndex?: unknown) {
    const length = this.log.length
    return this.search(value, relativeIndex(fromIndex, length, 0), length, 1)
  },
  lastIndexOf(this: ViewReader, value: unknown, fromIndex?: unknown) {
    const length = this.log.length
    const from = fromIndex === undefined ? length - 1 : Math.min(relativeIndex(fromIndex, length, length - 1), length - 1)
    if (fromIndex !== undefined && Math.trunc(Number(fromIndex)) < -length) return -1
    return this.search(value, from, -1, -1)
  },
  includes(this: ViewReader, value: unknown, fromIndex?: unknown) {
    const length = this.log.length
    return this.search(value, relativeIndex(fromIndex, length, 0), length, 1) >= 0
  },
  values(this: ViewReader) {
    return new EntryIterator(this.log)
  },
  forEach(this: ViewReader, callback: Visit, thisArg?: unknown) {
    const visit = callable(callback)
    const length = this.log.length
    const view = this.view
    for (let seq = 0; seq < length; seq++) visit.call(thisArg, this.at(seq)!, seq, view)
  },
  map(this: ViewReader, callback: Visit, thisArg?: unknown) {
    const visit = callable(callback)
    const length = this.log.length
    const view = this.view
    const out = new Array<unknown>(length)
    for (let seq = 0; seq < length; seq++) out[seq] = visit.call(thisArg, this.at(seq)!, seq, view)
    return out
  },
  filter(this: ViewReader, callback: Visit, thisArg?: unknown) {
    const visit = callable(callback)
    const length = this.log.length
    const view = this.view
    const out: AnySessionEvent[] = []
    for (let seq = 0; seq < length; seq++) {
      const event = this.at(seq)!
      if (visit.call(thisArg, event, seq, view)) out.push(event)
    }
    return out
  },
  find(this: ViewReader, callback: Visit, thisArg?: unknown) {
    return this.first(callable(callback), thisArg, 0, this.log.length, 1) < 0 ? undefined : this.found
  },
  findIndex(this: ViewReader, callback: Visit, thisArg?: unknown) {
    return this.first(callable(callback), thisArg, 0, this.log.length, 1)
  },
  findLast(this: ViewReader, callback: Visit, thisArg?: unknown) {
    return this.first(callable(callback), thisArg, this.log.length - 1, -1, -1) < 0 ? undefined : this.found
  },
  findLastIndex(this: ViewReader, callback: Visit, thisArg?: unknown) {
    return this.first(callable(callback), thisArg, this.log.length - 1, -1, -1)
  },
  some(this: ViewReader, callback: Visit, thisArg?: unknown) {
    return this.first(callable(callback), thisArg, 0, this.log.length, 1) >= 0
  },
  every(this: ViewReader, callback: Visit, thisArg?: unknown) {
    const visit = callable(callback)
    const length = this.log.length
    const view = this.view
    for (let seq = 0; seq < length; seq++) if (!visit.call(thisArg, this.at(seq)!, seq, view)) return false
    return true
  },
  reduce(this: ViewReader, callback: Reduce, ...initial: unknown[]) {
    const reduce = callable(callback)
    const length = this.log.length
    const view = this.view
    let seq = 0
    let sum: unknown
    if (initial.length > 0) sum = initial[0]
    else if (length === 0) throw new TypeError('Reduce of empty array with no initial value')
    else sum = this.at(seq++)
    for (; seq < length; seq++) sum = reduce(sum, this.at(seq)!, seq, view)
    return sum
  },
}
