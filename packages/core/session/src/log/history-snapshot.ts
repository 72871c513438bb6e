import { inspect } from 'node:util'
import { HISTORY, type Message } from '@deepseek-ai/dsh-llm'
import { relativeIndex, toIndex } from './array-index'

/**
 * What every write to a history snapshot throws: a `TypeError`, as a write to
 * a frozen array does in strict mode, with `code: 'READ_ONLY'`.
 */
export class ReadOnlyHistoryError extends TypeError {
  override readonly name = 'ReadOnlyHistoryError'
  readonly code = 'READ_ONLY' as const

  constructor() {
    super(
      'a message history from session.deriveMessages() is an immutable snapshot: copy it ([...messages] or messages.slice()) to build another list; the history itself grows by appending events to the session',
    )
  }
}

function readOnly(): never {
  throw new ReadOnlyHistoryError()
}

/** Answers the handler of a snapshot through its `get` trap; known to this module only. */
const STATE = Symbol('history snapshot state')

/**
 * The proxy handler of one snapshot, and its state: the first `length`
 * entries of `entries`, an append-only array shared with the session (and
 * with every other snapshot of the same `history`).
 *
 * Its target is the snapshot's own empty array until something asks whether
 * the snapshot is frozen or extensible (`Object.isFrozen`, `isSealed`,
 * `isExtensible`, a deep-freeze helper). A proxy may report itself frozen
 * only when its target holds every entry as a frozen property, so that
 * question fills the target with the entries and freezes it (`sealed`), once
 * per snapshot: the copy is paid by whoever asks, never by `deriveMessages()`
 * (R-SES-2 with R-PERF-1). From then on the descriptor and key traps answer
 * with the target's own.
 */
class SnapshotState implements ProxyHandler<Message[]> {
  // The fields are `declare`d and set in the constructor: a class field (even one without an initializer) makes
  // V8 run the class's field initializers as a function of their own, one more call per snapshot in unoptimized code.
  /** Whether the target holds the entries, frozen. */
  private declare sealed: boolean
  declare readonly entries: readonly Message[]
  declare readonly length: number
  declare readonly history: object

  constructor(entries: readonly Message[], length: number, history: object) {
    this.sealed = false
    this.entries = entries
    this.length = length
    this.history = history
  }

  get(target: Message[], key: string | symbol, receiver: unknown): unknown {
    if (typeof key === 'string') {
      // `length` first: it is read before every loop over a snapshot, and the index parse would fail on it.
      if (key === 'length') return this.length
      const index = toIndex(key)
      if (index >= 0) return index < this.length ? this.entries[index] : undefined
      const method = methods[key]
      if (method !== undefined) return method
    } else if (key === Symbol.iterator) {
      return methods.values
    } else if (key === HISTORY) {
      return this.history
    } else if (key === STATE) {
      return this
    }
    return Reflect.get(target, key, receiver)
  }

  has(target: Message[], key: string | symbol): boolean {
    if (typeof key === 'string') {
      const index = toIndex(key)
      if (index >= 0) return index < this.length
    }
    return Reflect.has(target, key)
  }

  /** A snapshot is frozen: the first question about it seals its target (see the class). */
  isExtensible(target: Message[]): boolean {
    if (!this.sealed) {
      // A sealed target's keys must be exactly what `ownKeys` reports; it prints as its entries anyway.
      delete (target as unknown as Record<symbol, unknown>)[inspect.custom]
      const { entries, length } = this
      for (let index = 0; index < length; index++) target.push(entries[index]!)
      Object.freeze(target)
      this.sealed = true
    }
    return false
  }

  ownKeys(target: Message[]): (string | symbol)[] {
    if (this.sealed) return Reflect.ownKeys(target)
    const keys: string[] = []
    for (let index = 0; index < this.length; index++) keys.push(String(index))
    keys.push('length')
    return keys
  }

  getOwnPropertyDescriptor(target: Message[], key: string | symbol): PropertyDescriptor | undefined {
    if (this.sealed) return Reflect.getOwnPropertyDescriptor(target, key)
    if (typeof key !== 'string') return undefined
    // A proxy may not report the target's non-configurable, writable `length` as read-only.
    if (key === 'length') return { value: this.length, writable: true, enumerable: false, configurable: false }
    const index = toIndex(key)
    if (index < 0 || index >= this.length) return undefined
    return { value: this.entries[index], writable: false, enumerable: true, configurable: true }
  }

  set(): boolean {
    return readOnly()
  }

  /** Refused, except a redefinition that changes nothing on a sealed target (what `Object.freeze` does to a frozen array). */
  defineProperty(target: Message[], key: string | symbol, descriptor: PropertyDescriptor): boolean {
    if (this.sealed && Reflect.defineProperty(target, key, descriptor)) return true
    return readOnly()
  }

  deleteProperty(): boolean {
    return readOnly()
  }

  /** A snapshot is frozen already: seals the target (as the first question does) and succeeds, so `Object.freeze` and `Object.preventExtensions` are the no-ops they are on a frozen array. */
  preventExtensions(target: Message[]): boolean {
    this.isExtensible(target)
    return true
  }

  setPrototypeOf(): boolean {
    return readOnly()
  }
}

/** The state of `receiver` when it is a snapshot. */
function stateOf(receiver: unknown): SnapshotState | undefined {
  return receiver !== null && typeof receiver === 'object' ? ((receiver as { [STATE]?: SnapshotState })[STATE] ?? undefined) : undefined
}

/** Iterates a snapshot's entries, reading the shared array directly. */
class SnapshotIterator implements IterableIterator<Message> {
  // Set in the constructor, not as class fields (see `SnapshotState`): one iterator per loop over a snapshot.
  private declare index: number
  private declare readonly entries: readonly Message[]
  private declare readonly length: number

  constructor(entries: readonly Message[], length: number) {
    this.index = 0
    this.entries = entries
    this.length = length
  }

  next(): IteratorResult<Message, undefined> {
    const index = this.index
    if (index >= this.length) return { value: undefined, done: true }
    this.index = index + 1
    return { value: this.entries[index]!, done: false }
  }

  [Symbol.iterator](): IterableIterator<Message> {
    return this
  }
}

type Visit = (message: Message, index: number, messages: readonly Message[]) => unknown
type Method = (this: unknown, ...args: any[]) => unknown

function callable<F>(callback: F): F {
  if (typeof callback !== 'function') throw new TypeError(`${String(callback)} is not a function`)
  return callback
}

/** The first index from `from` towards `to` (exclusive) whose entry `visit` accepts, or -1. */
function first(state: SnapshotState, self: unknown, visit: Visit, thisArg: unknown, from: number, to: number, step: 1 | -1): number {
  const entries = state.entries
  for (let index = from; index !== to; index += step) {
    if (visit.call(thisArg, entries[index]!, index, self as readonly Message[])) return index
  }
  return -1
}

const generic = Array.prototype as unknown as Record<string, Method>

/**
 * The methods a snapshot answers with. Called on a snapshot, they read the
 * shared array directly within the snapshot's length (the proxy's per-index
 * trap would cost a runtime call and a key string per entry); called on any
 * other receiver (`messages.map.call(other, …)`), they do what `Array`'s do.
 * Callbacks receive the snapshot as their third argument, as `Array`'s
 * receive the array.
 */
const methods: Record<string, Method> = Object.assign(Object.create(null) as Record<string, Method>, {
  values(this: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.values!.call(this)
    return new SnapshotIterator(state.entries, state.length)
  },
  at(this: unknown, position?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.at!.call(this, position)
    let index = Math.trunc(Number(position)) || 0
    if (index < 0) index += state.length
    return index >= 0 && index < state.length ? state.entries[index] : undefined
  },
  slice(this: unknown, start?: unknown, end?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.slice!.call(this, start, end)
    const length = state.length
    return state.entries.slice(relativeIndex(start, length, 0), relativeIndex(end, length, length))
  },
  indexOf(this: unknown, value: unknown, fromIndex?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.indexOf!.call(this, value, fromIndex)
    const { entries, length } = state
    for (let index = relativeIndex(fromIndex, length, 0); index < length; index++) if (entries[index] === value) return index
    return -1
  },
  lastIndexOf(this: unknown, value: unknown, ...fromIndex: unknown[]) {
    const state = stateOf(this)
    if (state === undefined) return generic.lastIndexOf!.call(this, value, ...fromIndex)
    const { entries, length } = state
    let index = length - 1
    if (fromIndex.length > 0) {
      const n = Math.trunc(Number(fromIndex[0])) || 0
      index = n < 0 ? length + n : Math.min(n, length - 1)
    }
    for (; index >= 0; index--) if (entries[index] === value) return index
    return -1
  },
  includes(this: unknown, value: unknown, fromIndex?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.includes!.call(this, value, fromIndex)
    const { entries, length } = state
    // SameValueZero: entries are messages, but a caller may look for anything (NaN included).
    for (let index = relativeIndex(fromIndex, length, 0); index < length; index++) {
      const entry: unknown = entries[index]
      if (entry === value || (entry !== entry && value !== value)) return true
    }
    return false
  },
  forEach(this: unknown, callback: Visit, thisArg?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.forEach!.call(this, callback, thisArg)
    const visit = callable(callback)
    const { entries, length } = state
    for (let index = 0; index < length; index++) visit.call(thisArg, entries[index]!, index, this as readonly Message[])
    return undefined
  },
  map(this: unknown, callback: Visit, thisArg?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.map!.call(this, callback, thisArg)
    const visit = callable(callback)
    const { entries, length } = state
    const out = new Array<unknown>(length)
    for (let index = 0; index < length; index++) out[index] = visit.call(thisArg, entries[index]!, index, this as readonly Message[])
    return out
  },
  filter(this: unknown, callback: Visit, thisArg?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.filter!.call(this, callback, thisArg)
    const visit = callable(callback)
    const { entries, length } = state
    const out: Message[] = []
    for (let index = 0; index < length; index++) {
      const entry = entries[index]!
      if (visit.call(thisArg, entry, index, this as readonly Message[])) out.push(entry)
    }
    return out
  },
  find(this: unknown, callback: Visit, thisArg?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.find!.call(this, callback, thisArg)
    const index = first(state, this, callable(callback), thisArg, 0, state.length, 1)
    return index < 0 ? undefined : state.entries[index]
  },
  findIndex(this: unknown, callback: Visit, thisArg?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.findIndex!.call(this, callback, thisArg)
    return first(state, this, callable(callback), thisArg, 0, state.length, 1)
  },
  findLast(this: unknown, callback: Visit, thisArg?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.findLast!.call(this, callback, thisArg)
    const index = first(state, this, callable(callback), thisArg, state.length - 1, -1, -1)
    return index < 0 ? undefined : state.entries[index]
  },
  findLastIndex(this: unknown, callback: Visit, thisArg?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.findLastIndex!.call(this, callback, thisArg)
    return first(state, this, callable(callback), thisArg, state.length - 1, -1, -1)
  },
  some(this: unknown, callback: Visit, thisArg?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.some!.call(this, callback, thisArg)
    return first(state, this, callable(callback), thisArg, 0, state.length, 1) >= 0
  },
  every(this: unknown, callback: Visit, thisArg?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.every!.call(this, callback, thisArg)
    const visit = callable(callback)
    const { entries, length } = state
    for (let index = 0; index < length; index++) if (!visit.call(thisArg, entries[index]!, index, this as readonly Message[])) return false
    return true
  },
  reduce(this: unknown, callback: (sum: unknown, message: Message, index: number, messages: readonly Message[]) => unknown, ...initial: unknown[]) {
    const state = stateOf(this)
    if (state === undefined) return generic.reduce!.call(this, callback, ...initial)
    const reduce = callable(callback)
    const { entries, length } = state
    let index = 0
    let sum: unknown
    if (initial.length > 0) sum = initial[0]
    else if (length === 0) throw new TypeError('Reduce of empty array with no initial value')
    else sum = entries[index++]
    for (; index < length; index++) sum = reduce(sum, entries[index]!, index, this as readonly Message[])
    return sum
  },
  join(this: unknown, separator?: unknown) {
    const state = stateOf(this)
    if (state === undefined) return generic.join!.call(this, separator)
    return state.entries.slice(0, state.length).join(separator as string | undefined)
  },
})

/**
 * `util.inspect` (console.log) formats a proxy's target rather than the
 * proxy, calling the target's custom inspector with the proxy as `this`:
 * an unsealed target (empty) carries this one, which shows the snapshot's
 * entries; a sealed one holds the entries and prints as them.
 */
function inspectSnapshot(this: readonly Message[], _depth: number, options: object): string {
  return inspect(this.slice(), options)
}

/**
 * A snapshot's target: its own empty array, never written until it is sealed
 * (every write to the snapshot is trapped), so that `Array.isArray` holds and
 * the prototype is `Array.prototype`. The inspector is a plain own property
 * (a store the engine caches: `Object.defineProperty` or a custom prototype
 * would cost several times the rest of a derivation); `ownKeys` does not
 * report it, which a proxy may do while its target is extensible, and
 * sealing deletes it.
 */
function newTarget(): Message[] {
  const target: Message[] = []
  ;(target as unknown as Record<symbol, unknown>)[inspect.custom] = inspectSnapshot
  return target
}

/**
 * An immutable snapshot of a history: the first `length` entries of
 * `entries`, which the caller only ever appends to (it may keep growing: the
 * snapshot does not follow it). O(1) to make; nothing is copied.
 *
 * Contract: the snapshot behaves as a frozen `Message[]` of `length`
 * entries. `Array.isArray` is true; `Object.isFrozen` is true (R-SES-2);
 * `length`, index access, iteration, spreading, `JSON.stringify`,
 * `Object.keys` and every `Array.prototype` method work as on that array;
 * every write (assignment, `push`, `unshift`, `splice`, `sort`,
 * `length = …`, `delete`, `defineProperty`, `setPrototypeOf`) throws
 * `ReadOnlyHistoryError` (a `TypeError`) and changes nothing;
 * `Object.freeze` and `Object.preventExtensions` succeed and change nothing,
 * as on a frozen array. `messages[HISTORY]` (see `historyOf` in dsh-llm) is
 * `history`. The first `Object.isFrozen` (or `isSealed`, `isExtensible`,
 * `Object.freeze`) on
 * a snapshot costs one copy of its `length` entries, once (see
 * `SnapshotState`). Not an array in every respect: `structuredClone` refuses
 * it (copy it first).
 */
export function createHistorySnapshot(entries: readonly Message[], length: number, history: object): readonly Message[] {
  return new Proxy(newTarget(), new SnapshotState(entries, length, history)) as readonly Message[]
}
