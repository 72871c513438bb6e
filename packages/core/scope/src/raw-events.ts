import { symbols, type Context, type EventsService, type Hook } from './cordis'

/**
 * Cordis' events service itself, typed with the context's own dispatch
 * methods, plus read access to its listener lists.
 *
 * `emit`, `parallel`, `serial`, `bail` and `waterfall` behave exactly as the
 * context methods of the same name (a `subjectFilter` as first argument makes
 * them scope-filtered). `_hooks` is Cordis' listener list per event name, in
 * registration order (`prepend` listeners first); read it, never write it.
 */
export interface RawEvents extends Pick<Context, 'emit' | 'parallel' | 'serial' | 'bail' | 'waterfall'> {
  readonly _hooks: { readonly [name: string]: readonly Hook[] | undefined }
}

/**
 * The events service behind `ctx`, without Cordis' tracing proxy. Resolve it
 * once (in a service's constructor) and keep it.
 *
 * Why: in Cordis v4 rc.10, reaching a mixin such as `ctx.waterfall` through a
 * context allocates an `Error` (a stack capture) before it resolves anything,
 * and `ctx.events` is a tracing proxy built anew on every read whose methods
 * read the service's own fields through the proxy again. Dispatching on the
 * service itself costs a fraction of a microsecond; `ctx.waterfall` cost
 * 5–14 µs per call on this project's benches.
 *
 * Only dispatch through it: the service's `on` would register listeners in
 * the service's own context, not the caller's (use `ctx.on` for that).
 */
export function rawEvents(ctx: Context): RawEvents {
  const traced = ctx.events as EventsService & { readonly [key: symbol]: EventsService | undefined }
  return (traced[symbols.original] ?? traced) as unknown as RawEvents
}

/**
 * Whether a dispatch of `name` on `events` would do anything: someone listens
 * to `name`, or someone traces dispatches (`internal/dispatch`).
 *
 * When it returns false, an `emit` does nothing and a `waterfall` only calls
 * its innermost step, so a hot path may skip the dispatch (and the argument
 * array it would build) without changing behaviour. It ignores scope: a
 * listener scoped to another subject still counts as heard.
 */
export function heard(events: RawEvents, name: string): boolean {
  const hooks = events._hooks
  return !!hooks[name]?.length || !!hooks['internal/dispatch']?.length
}
