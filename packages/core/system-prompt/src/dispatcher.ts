import type { Context } from './cordis'

/**
 * The dispatch side of `ctx.events`, typed like the context's own methods.
 * Held once by the service core: reaching `ctx.waterfall` through a context
 * costs an `Error` allocation per access in Cordis, `ctx.events` does not.
 */
export interface Dispatcher extends Pick<Context, 'waterfall'> {
  readonly _hooks: Readonly<Record<string, readonly unknown[] | undefined>>
}

export function dispatcherOf(ctx: Context): Dispatcher {
  return ctx.events as unknown as Dispatcher
}

/**
 * Whether nobody listens to `name` and nobody traces dispatches
 * (`internal/dispatch`): then a waterfall would only call its innermost step
 * and an emit would do nothing, so the per-call path skips the dispatch.
 */
export function unheard(events: Dispatcher, name: string): boolean {
  const hooks = events._hooks
  return !hooks[name]?.length && !hooks['internal/dispatch']?.length
}
