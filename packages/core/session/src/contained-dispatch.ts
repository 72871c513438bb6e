import type { SubjectFilter } from '@deepseek-ai/dsh-scope'
import { Context, symbols, type EventsService } from './cordis'

/**
 * Cordis' events service itself. `ctx.events` returns a tracing proxy built
 * anew on every read, whose methods read their own fields through the proxy;
 * the store holds the service once and dispatches on it directly.
 */
export function rawEvents(ctx: Context): EventsService {
  const traced = ctx.events as unknown as Record<symbol, EventsService | undefined>
  return traced[symbols.original] ?? ctx.events
}

/** Whether anyone listens to `name` or traces dispatches (`internal/dispatch`). */
export function heard(events: EventsService, name: string): boolean {
  return !!events._hooks[name]?.length || !!events._hooks['internal/dispatch']?.length
}

/**
 * Scope-filtered, per-listener-contained `emit` for the hot path.
 *
 * It has exactly the semantics of dsh-scope's `emitContained` (listeners
 * selected by Cordis' `Context.filter` protocol in registration order,
 * `global` listeners always included, each call in its own try/catch, a
 * rejected promise reported rather than left unhandled, listeners added
 * during the dispatch not called), but it reads the listener list in place.
 * `emitContained` goes through `events.dispatch`, which copies the list twice
 * and `bind`s every listener, and binding Cordis' listener proxies costs more
 * than the rest of an append together; `session/event` is emitted once per
 * streamed chunk. (Requested upstream in dsh-scope; this goes away then.)
 */
export class ContainedEmitter {
  constructor(private readonly events: EventsService) {}

  emit(filter: SubjectFilter, name: string, args: readonly unknown[], onError: (error: unknown) => void): void {
    const events = this.events
    const hooks = events._hooks[name]
    if (!hooks) return
    if (events._hooks['internal/dispatch']?.length) events.emit('internal/dispatch', 'emit', name, args, filter)
    // A listener may remove itself (or others) while we iterate: iterate a
    // snapshot unless there is only one listener to call.
    const list = hooks.length === 1 ? hooks : hooks.slice()
    const count = list.length
    for (let i = 0; i < count; i++) {
      const hook = list[i]!
      if (!hook.global && !filter[Context.filter](hook.ctx)) continue
      try {
        const result = Reflect.apply(hook.callback, filter, args) as PromiseLike<unknown> | undefined
        if (result !== undefined && result !== null && typeof result.then === 'function') result.then(undefined, onError)
      } catch (error) {
        onError(error)
      }
    }
  }
}
