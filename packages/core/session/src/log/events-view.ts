import { inspect } from 'node:util'
import { SessionError } from '../errors'
import type { AnySessionEvent } from '../types'
import { toIndex } from './array-index'
import type { PackedLog } from './slots'
import { viewMethods } from './view-methods'
import { ViewReader } from './view-reader'

function readOnly(): never {
  throw new SessionError('READ_ONLY', 'session.events is a read-only view of the log: append events with session.append(type, data)')
}

const arrayMethods = Array.prototype as unknown as Record<string, (...args: unknown[]) => unknown>

/** How many entries `console.log` of a view shows before it says how many more there are. */
const INSPECT_ENTRIES = 100

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
 *   length is read once; see `viewMethods`). `events[i]` goes through the
 *   proxy: a reader that walks a long log entry by entry is several times
 *   faster with `for…of` or `findLast` than with an index. The identity
 *   searches skip packed entries, which no outside object can be (except the
 *   last one read).
 *
 * The parts: the slots and packed chunks (`slots.ts`, `chunk-pack.ts`), the
 * reads (`ViewReader`), the methods (`viewMethods`, `EntryIterator`); this
 * function assembles them behind the proxy's traps.
 */
export function createEventsView(log: PackedLog): readonly AnySessionEvent[] {
  const reader = new ViewReader(log)
  // What the view hands out: on the view itself, `viewMethods`; called on another receiver
  // (`events.forEach.call(other, …)`, or detached), what `Array.prototype`'s method does there.
  const exposed: Record<string, (...args: any[]) => unknown> = Object.create(null)
  for (const key of Object.keys(viewMethods)) {
    const own = viewMethods[key]!
    const generic = arrayMethods[key]!
    exposed[key] = {
      [key](this: unknown, ...args: unknown[]) {
        return this === view ? own.apply(reader, args) : generic.apply(this, args)
      },
    }[key]!
  }
  const values = exposed.values!
  const target: AnySessionEvent[] = []
  // `util.inspect` (console.log) formats a proxy's target, not the proxy: show the entries.
  Object.defineProperty(target, inspect.custom, {
    configurable: true,
    value: (_depth: number, options: object) => {
      const length = log.length
      const shown = viewMethods.slice!.call(reader, 0, Math.min(length, INSPECT_ENTRIES)) as AnySessionEvent[]
      const text = inspect(shown, options)
      return length > shown.length ? `${text.slice(0, -1).trimEnd()}, ... ${length - shown.length} more events ]` : text
    },
  })
  const view: readonly AnySessionEvent[] = new Proxy(target, {
    get(_target, key, receiver) {
      if (typeof key === 'string') {
        const seq = toIndex(key)
        if (seq >= 0) return reader.at(seq)
        if (key === 'length') return log.length
        const method = exposed[key]
        if (method !== undefined) return method
      } else if (key === Symbol.iterator) {
        return values
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
      return { value: reader.at(seq), writable: false, enumerable: true, configurable: true }
    },
    set: readOnly,
    defineProperty: readOnly,
    deleteProperty: readOnly,
    preventExtensions: readOnly,
    setPrototypeOf: readOnly,
  })
  reader.view = view
  return view
}
