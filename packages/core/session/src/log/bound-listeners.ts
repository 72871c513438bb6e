import { symbols, type Context } from '../cordis'

/**
 * What `ctx.on` wrapped, for every listener registered while a session store
 * is loaded: Cordis' proxy (the callback its listener list holds) → the
 * function it wraps.
 *
 * Why: `ctx.on` registers `ctx.reflect.bind(listener)`, a proxy whose call
 * passes `this` and each argument through Cordis' `trace` (which makes a
 * traceable service, or a context's shadow, appear as the listener's own
 * view). Each call reaches `trace` through the traced `reflect` service:
 * about half a microsecond per `session/event` listener and event on Node 20,
 * a quarter of a streamed chunk's cost. For the values a session dispatches
 * (its filter, itself, a frozen event envelope) `trace` returns the value
 * itself (`traceKeeps`), so calling the wrapped function directly with them
 * is exactly what the proxy does. Cordis keeps no public way back from the
 * proxy to the function, hence this record, made where the proxy is made.
 */
const wrapped = new WeakMap<Function, Function>()

/** The stores using each `reflect` service's recording `bind`, to restore Cordis' own when the last one unloads. */
const users = new WeakMap<object, number>()

/** The recording `bind` put on each `reflect` service: the undo removes only that one, never a `bind` another plugin put in its place meanwhile. */
const installed = new WeakMap<object, Function>()

type Bind = (this: unknown, callback: Function) => Function

/**
 * Records the function behind every listener `ctx.on` registers from now on
 * (`wrapped`), by giving the root's `reflect` service an own `bind` that
 * calls Cordis' own and notes the pair; the proxy it returns, and so every
 * registration, is unchanged. Returns the undo, which puts Cordis' `bind`
 * back once no store uses it (unless another plugin has meanwhile put a `bind`
 * of its own there: that one stays). Does nothing (and the dispatch calls the
 * proxies) when `reflect.bind` is not the prototype method it expects.
 */
export function recordBoundListeners(ctx: Context): () => void {
  const traced = ctx.reflect as unknown as Record<symbol, object | undefined>
  const reflect = (traced[symbols.original] ?? traced) as { bind?: unknown }
  const own = Object.getOwnPropertyDescriptor(reflect, 'bind')
  const count = users.get(reflect) ?? 0
  if (count === 0) {
    const original = Object.getPrototypeOf(reflect)?.bind as Bind | undefined
    if (own !== undefined || typeof original !== 'function') return () => {}
    const bind: Bind = function (this: unknown, callback) {
      const bound = original.call(this, callback)
      if (typeof bound === 'function' && typeof callback === 'function' && bound !== callback) wrapped.set(bound, callback)
      return bound
    }
    Object.defineProperty(reflect, 'bind', { value: bind, writable: true, configurable: true, enumerable: false })
    installed.set(reflect, bind)
  }
  users.set(reflect, count + 1)
  let undone = false
  return () => {
    if (undone) return
    undone = true
    const left = users.get(reflect)! - 1
    users.set(reflect, left)
    if (left === 0 && Object.getOwnPropertyDescriptor(reflect, 'bind')?.value === installed.get(reflect)) delete reflect.bind
  }
}

/** The function `ctx.on` wrapped into `callback`, or `callback` itself when it is not such a proxy (or was registered before any store loaded). */
export function unwrapListener(callback: Function): Function {
  return wrapped.get(callback) ?? callback
}

const SHADOW = symbols.shadow as symbol
const TRACKER = symbols.tracker as symbol

/**
 * Whether Cordis' `trace` returns `value` itself: a primitive, or an object
 * that is neither a context's shadow nor a traceable service (rc.10's
 * `getTraceable`). The proxy of `ctx.on` then passes it on unchanged.
 */
export function traceKeeps(value: unknown): boolean {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return true
  return !Object.hasOwn(value, SHADOW) && !(value as Record<symbol, unknown>)[TRACKER]
}

/**
 * `traceKeeps` for the events a session dispatches (frozen plain objects):
 * the same test, in a function of its own so that its type feedback sees
 * event envelopes only (the filter's and the session's checks, made when the
 * listener list changes, would otherwise deoptimize the per-event one).
 */
export function eventTraceKeeps(event: object): boolean {
  return !Object.hasOwn(event, SHADOW) && !(event as Record<symbol, unknown>)[TRACKER]
}
