import { inspect } from 'node:util'
import type { ChunkPack } from './chunk-pack'
import { SessionError } from './errors'
import type { AnySessionEvent } from './types'

/** One log entry as stored: the event object, or the index of a packed `assistant/chunk` in the log's `ChunkPack`. */
export type Slot = AnySessionEvent | number

/**
 * Where a view reads from: the first `length` entries of `slots` (the array
 * may hold more, e.g. while a session replays a log it adopted). Every field
 * is read on every access: `slots` only grows, `pack` may appear later.
 */
export interface PackedLog {
  readonly slots: readonly Slot[]
  readonly pack: ChunkPack | undefined
  readonly length: number
}

/** The event at `seq`, rebuilt when it is packed; `undefined` past the end. */
export function eventAt(log: PackedLog, seq: number): AnySessionEvent | undefined {
  if (seq >= log.length) return undefined
  const slot = log.slots[seq]
  return typeof slot === 'number' ? log.pack!.event(slot, seq) : slot
}

/** Whether the entry at `seq` is an `assistant/chunk` (without rebuilding a packed one). */
export function isChunkAt(slots: readonly Slot[], seq: number): boolean {
  const slot = slots[seq]
  return typeof slot === 'number' || slot?.type === 'assistant/chunk'
}

/** The array index a property key names, or -1. */
export function toIndex(key: string): number {
  const length = key.length
  if (length === 0 || length > 10) return -1
  let value = 0
  for (let i = 0; i < length; i++) {
    const digit = key.charCodeAt(i) - 48
    if (digit < 0 || digit > 9 || (digit === 0 && i === 0 && length > 1)) return -1
    value = value * 10 + digit
  }
  return value
}

/**
 * A relative index argument (`slice`'s `start`, `indexOf`'s `fromIndex`) as
 * `Array.prototype`'s methods read it, clamped to `[0, length]`;
 * `fallback` when it is `undefined`.
 */
export function relativeIndex(value: unknown, length: number, fallback: number): number {
  if (value === undefined) return fallback
  const n = Math.trunc(Number(value)) || 0
  return n < 0 ? Math.max(length + n, 0) : Math.min(n, length)
}

function readOnly(): never {
  throw new SessionError('READ_ONLY', 'session.events is a read-only view of the log: append events with session.append(type, data)')
}

/** Iterates a view's entries, live like an array iterator (entries appended meanwhile are visited). */
class EntryIterator implements IterableIterator<AnySessionEvent> {
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

/**
 * A read-only array over a packed log: `view[seq]`, `length`, iteration and
 * every `Array.prototype` method work as on the array of events, without the
 * log ever materializing its packed chunks as a whole.
 *
 * Contract:
 * - `Array.isArray(view)` is true; `JSON.stringify(view)` is the events' JSON.
 * - An unpacked entry is the stored event itself (identity is stable). A
 *   packed `assistant/chunk` is rebuilt on read: an equal, deep-frozen event,
 *   a new object per read (the last one read is reused while read again).
 * - Writing (assignment, `push`, `splice`, `defineProperty`, `delete`,
 *   `Object.freeze`) throws `READ_ONLY`.
 * - Iteration, `slice`, `at`, the searches (`indexOf`, `lastIndexOf`,
 *   `includes`) and the callback methods (`forEach`, `map`, `filter`,
 *   `find`, `findIndex`, `findLast`, `findLastIndex`, `some`, `every`,
 *   `reduce`) read the slots directly, as `Array`'s do on an array (the
 *   length is read once). `events[i]` goes through the proxy: a reader that
 *   walks a long log entry by entry is several times faster with `for…of` or
 *   `findLast` than with an index. The identity searches skip packed
 *   entries, which no outside object can be (except the last one read).
 */
export function createEventsView(log: PackedLog): readonly AnySessionEvent[] {
  let cachedSeq = -1
  let cached: AnySessionEvent | undefined
  const at = (seq: number): AnySessionEvent | undefined => {
    if (seq >= log.length) return undefined
    const slot = log.slots[seq]
    if (typeof slot !== 'number') return slot
    if (seq !== cachedSeq) {
      cached = log.pack!.event(slot, seq)
      cachedSeq = seq
    }
    return cached
  }
  const relative = relativeIndex
  const search = (value: unknown, from: number, to: number, step: 1 | -1): number => {
    const slots = log.slots
    for (let seq = from; seq !== to; seq += step) {
      const slot = slots[seq]
      if (typeof slot === 'number' ? seq === cachedSeq && value === cached : slot === value) return seq
    }
    return -1
  }
  const methods: Record<string, (...args: any[]) => unknown> = {
    at(index: unknown) {
      const length = log.length
      let n = Math.trunc(Number(index)) || 0
      if (n < 0) n += length
      return n >= 0 && n < length ? at(n) : undefined
    },
    slice(start?: unknown, end?: unknown) {
      const length = log.length
      const from = relative(start, length, 0)
      const to = relative(end, length, length)
      const out: AnySessionEvent[] = []
      for (let seq = from; seq < to; seq++) out.push(at(seq)!)
      return out
    },
    indexOf(value: unknown, fromIndex?: unknown) {
      const length = log.length
      return search(value, relative(fromIndex, length, 0), length, 1)
    },
    lastIndexOf(value: unknown, fromIndex?: unknown) {
      const length = log.length
      const from = fromIndex === undefined ? length - 1 : Math.min(relative(fromIndex, length, length - 1), length - 1)
      if (fromIndex !== undefined && Math.trunc(Number(fromIndex)) < -length) return -1
      return search(value, from, -1, -1)
    },
    includes(value: unknown, fromIndex?: unknown) {
      const length = log.length
      return search(value, relative(fromIndex, length, 0), length, 1) >= 0
    },
    values() {
      return new EntryIterator(log)
    },
    // The callback methods, done over the slots: `Array.prototype`'s versions would read every
    // entry through the proxy, which costs V8 a runtime call and a key string per index.
    forEach(callback: Visit, thisArg?: unknown) {
      const visit = callable(callback)
      const length = log.length
      for (let seq = 0; seq < length; seq++) visit.call(thisArg, at(seq)!, seq, self)
    },
    map(callback: Visit, thisArg?: unknown) {
      const visit = callable(callback)
      const length = log.length
      const out = new Array<unknown>(length)
      for (let seq = 0; seq < length; seq++) out[seq] = visit.call(thisArg, at(seq)!, seq, self)
      return out
    },
    filter(callback: Visit, thisArg?: unknown) {
      const visit = callable(callback)
      const length = log.length
      const out: AnySessionEvent[] = []
      for (let seq = 0; seq < length; seq++) {
        const event = at(seq)!
        if (visit.call(thisArg, event, seq, self)) out.push(event)
      }
      return out
    },
    find(callback: Visit, thisArg?: unknown) {
      return first(callable(callback), thisArg, 0, log.length, 1) < 0 ? undefined : found
    },
    findIndex(callback: Visit, thisArg?: unknown) {
      return first(callable(callback), thisArg, 0, log.length, 1)
    },
    findLast(callback: Visit, thisArg?: unknown) {
      return first(callable(callback), thisArg, log.length - 1, -1, -1) < 0 ? undefined : found
    },
    findLastIndex(callback: Visit, thisArg?: unknown) {
      return first(callable(callback), thisArg, log.length - 1, -1, -1)
    },
    some(callback: Visit, thisArg?: unknown) {
      return first(callable(callback), thisArg, 0, log.length, 1) >= 0
    },
    every(callback: Visit, thisArg?: unknown) {
      const visit = callable(callback)
      const length = log.length
      for (let seq = 0; seq < length; seq++) if (!visit.call(thisArg, at(seq)!, seq, self)) return false
      return true
    },
    reduce(callback: (sum: unknown, event: AnySessionEvent, seq: number, events: readonly AnySessionEvent[]) => unknown, ...initial: unknown[]) {
      const reduce = callable(callback)
      const length = log.length
      let seq = 0
      let sum: unknown
      if (initial.length > 0) sum = initial[0]
      else if (length === 0) throw new TypeError('Reduce of empty array with no initial value')
      else sum = at(seq++)
      for (; seq < length; seq++) sum = reduce(sum, at(seq)!, seq, self)
      return sum
    },
  }
  /** The event `first` last accepted: the object the callback saw (a packed entry read again would be a new one). */
  let found: AnySessionEvent | undefined
  /** The first seq from `from` towards `to` (exclusive) whose event `visit` accepts (kept in `found`), or -1. */
  const first = (visit: Visit, thisArg: unknown, from: number, to: number, step: 1 | -1): number => {
    for (let seq = from; seq !== to; seq += step) {
      const event = at(seq)!
      if (visit.call(thisArg, event, seq, self)) {
        found = event
        return seq
      }
    }
    found = undefined
    return -1
  }
  // What the view hands out: on the view itself, the methods above; called on another receiver
  // (`events.forEach.call(other, …)`, or detached), what `Array.prototype`'s method does there.
  const exposed: Record<string, (...args: any[]) => unknown> = Object.create(null)
  for (const key of Object.keys(methods)) {
    const own = methods[key]!
    const generic = (Array.prototype as unknown as Record<string, (...args: unknown[]) => unknown>)[key]!
    exposed[key] = {
      [key](this: unknown, ...args: unknown[]) {
        return this === self ? own(...args) : generic.apply(this, args)
      },
    }[key]!
  }
  const target: AnySessionEvent[] = []
  // `util.inspect` (console.log) formats a proxy's target, not the proxy: show the entries.
  Object.defineProperty(target, inspect.custom, {
    configurable: true,
    value: (_depth: number, options: object) => {
      const length = log.length
      const shown = methods.slice!(0, Math.min(length, 100)) as AnySessionEvent[]
      const text = inspect(shown, options)
      return length > shown.length ? `${text.slice(0, -1).trimEnd()}, ... ${length - shown.length} more events ]` : text
    },
  })
  const self: readonly AnySessionEvent[] = new Proxy(target, {
    get(_target, key, receiver) {
      if (typeof key === 'string') {
        const seq = toIndex(key)
        if (seq >= 0) return at(seq)
        if (key === 'length') return log.length
        const method = exposed[key]
        if (method !== undefined) return method
      } else if (key === Symbol.iterator) {
        return exposed.values
      }
      return Reflect.get(target, key, receiver)
    },
    has(_target, key) {
      if (typeof key === 'string') {
        const seq = toIndex(key)
        if (seq >= 0) return seq < log.length
      }
      return Reflect.has(target, key)
    },
    ownKeys() {
      const keys: string[] = []
      for (let seq = 0; seq < log.length; seq++) keys.push(String(seq))
      keys.push('length')
      return keys
    },
    getOwnPropertyDescriptor(_target, key) {
      if (typeof key !== 'string') return undefined
      if (key === 'length') return { value: log.length, writable: true, enumerable: false, configurable: false }
      const seq = toIndex(key)
      if (seq < 0 || seq >= log.length) return undefined
      return { value: at(seq), writable: false, enumerable: true, configurable: true }
    },
    set: readOnly,
    defineProperty: readOnly,
    deleteProperty: readOnly,
    preventExtensions: readOnly,
    setPrototypeOf: readOnly,
  })
  return self
}

type Visit = (event: AnySessionEvent, seq: number, events: readonly AnySessionEvent[]) => unknown

function callable<F>(callback: F): F {
  if (typeof callback !== 'function') throw new TypeError(`${String(callback)} is not a function`)
  return callback
}
