import { Context, type Hook } from './cordis'
import type { RawEvents } from './raw-events'

type FilterFn = (this: object, ctx: Context) => boolean

const kFilter = Context.filter

/**
 * The `emit` of Cordis' events service, re-done over its listener list in
 * place, with a try/catch around each listener. Shared by `emitContained`,
 * `ContainedEmitter` and `announce`; internal to this package.
 *
 * Semantics, each the same as Cordis' own `emit` (rc.10, `_resolve` + `emit`):
 * - `internal/dispatch` tracers are notified first, with `('emit', name,
 *   args, thisArg)`, unless `name` itself starts with `internal/`; they run
 *   through Cordis' `emit`, so a throwing tracer propagates.
 * - The listeners called are those registered when the dispatch starts, in
 *   registration order: one added during the dispatch is not called, and one
 *   removed during it (by itself or by an earlier listener) is still called
 *   this once, so removing a listener never makes the next one miss the event.
 * - A listener registered with `{ global: true }` is always called; any other
 *   only when `thisArg[Context.filter]`, if `thisArg` has one, admits its
 *   context (`subjectFilter`).
 * - Each listener is called with `thisArg` as `this` and `args` as arguments.
 *
 * What differs from Cordis: a listener's synchronous throw is handed to
 * `onError` and the next listener runs (`rethrow` false), or it propagates at
 * once and the remaining listeners are skipped (`rethrow` true); a listener
 * that returns a rejected promise always has the reason handed to `onError`.
 * A throw from `onError` itself propagates.
 *
 * Why in place: Cordis' deprecated `dispatch` copies the list twice (`filter`,
 * `map`) and `bind`s every listener, and binding Cordis' listener proxies
 * costs more than the rest of a session append together; `session/event` is
 * emitted once per streamed chunk. With a single listener the list is not
 * copied either: nothing is read from it after that listener returns.
 */
export function dispatchInPlace(
  events: RawEvents,
  thisArg: object | null,
  name: string,
  args: readonly unknown[],
  onError: (error: unknown) => void,
  rethrow: boolean,
): void {
  const all = events._hooks
  if (all['internal/dispatch']?.length && !name.startsWith('internal/')) {
    events.emit('internal/dispatch', 'emit', name, args as unknown[], thisArg)
  }
  const hooks = all[name]
  if (hooks === undefined) return
  const count = hooks.length
  const list: readonly Hook[] = count === 1 ? hooks : hooks.slice()
  const filter = thisArg === null ? undefined : ((thisArg as { [kFilter]?: FilterFn })[kFilter])
  for (let i = 0; i < count; i++) {
    const hook = list[i]!
    if (!hook.global && filter !== undefined && !filter.call(thisArg!, hook.ctx)) continue
    try {
      const result = Reflect.apply(hook.callback, thisArg, args) as PromiseLike<unknown> | null | undefined
      if (result !== undefined && result !== null && typeof result.then === 'function') result.then(undefined, onError)
    } catch (error) {
      if (rethrow) throw error
      onError(error)
    }
  }
}
