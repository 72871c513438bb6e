import type { Context } from './cordis'
import { dispatchInPlace } from './in-place-dispatch'
import { rawEvents, type RawEvents } from './raw-events'

/**
 * Emits `name` to every listener, each in its own try/catch, so one failing
 * observer cannot stop the others or the emitter. `thisArg` is usually a
 * `subjectFilter` (then the dispatch is scope-filtered), or `null`.
 *
 * Cordis' own `emit` stops at the first listener that throws; notifications
 * whose contract says "listener failures are contained" (`session/event`,
 * `agent/*` notifications, `tools/change`) go through here instead.
 *
 * Contract (otherwise exactly Cordis' `emit`):
 * - Listeners are those registered when the dispatch starts, in registration
 *   order; `{ global: true }` listeners always run, others only when the
 *   filter admits their context. A listener added during the dispatch is not
 *   called; one removed during it is still called this once.
 * - A synchronous throw and a rejected promise returned by a listener are
 *   each handed to `onError`, and the dispatch goes on. `onError` must not
 *   throw (a throw from it propagates and skips the remaining listeners).
 * - `internal/dispatch` tracers are notified as for any `ctx.emit`.
 *
 * It resolves the events service from `ctx` on every call; a hot path holds a
 * `ContainedEmitter` (`containedEmitter(ctx)`) instead.
 */
export function emitContained(
  ctx: Context,
  thisArg: object | null,
  name: string,
  args: readonly unknown[],
  onError: (error: unknown) => void,
): void {
  dispatchInPlace(rawEvents(ctx), thisArg, name, args, onError, false)
}

/**
 * `emitContained` bound to one events service, for owners that emit on a hot
 * path (a session emits `session/event` once per streamed chunk). Build it
 * once, in the owner's constructor, and keep it; it holds no other state.
 */
export class ContainedEmitter {
  constructor(readonly events: RawEvents) {}

  /** Exactly `emitContained(ctx, thisArg, name, args, onError)` on the bound service. */
  emit(thisArg: object | null, name: string, args: readonly unknown[], onError: (error: unknown) => void): void {
    dispatchInPlace(this.events, thisArg, name, args, onError, false)
  }
}

/** A `ContainedEmitter` on the events service behind `ctx` (see `rawEvents`). */
export function containedEmitter(ctx: Context): ContainedEmitter {
  return new ContainedEmitter(rawEvents(ctx))
}
