import { dispatchInPlace } from './in-place-dispatch'
import type { RawEvents } from './raw-events'

/**
 * Dispatches a vetoable announcement such as `session/created` or
 * `agent/created`: something has just been published, and any listener may
 * refuse it by throwing.
 *
 * Contract:
 * - Listeners are selected and ordered as by Cordis' `emit` (registration
 *   order; scope-filtered when `thisArg` is a `subjectFilter`; `{ global:
 *   true }` listeners always run; the list is fixed when the dispatch starts).
 * - A synchronous throw is the veto: it propagates out of `announce` at once,
 *   and the listeners after it are not called. The caller rolls the
 *   publication back (and announces its disposal, so every listener that saw
 *   it created also sees it disposed) and rethrows.
 * - A promise a listener returns cannot veto (the publication is already
 *   visible when it settles): its rejection is handed to `onRejected`, which
 *   should log it and must not throw.
 * - `internal/dispatch` tracers are notified as for any `ctx.emit`.
 *
 * `events` is the service from `rawEvents(ctx)`, held by the owner.
 */
export function announce(
  events: RawEvents,
  thisArg: object | null,
  name: string,
  args: readonly unknown[],
  onRejected: (error: unknown) => void,
): void {
  dispatchInPlace(events, thisArg, name, args, onRejected, true)
}
