import { Service } from './cordis'

/**
 * Makes Cordis hand out `service`'s methods as plain functions, the way it
 * traces its own `events` and `reflect` services. Call it in the constructor,
 * right after `super(ctx, name)`.
 *
 * Why: Cordis v4 rc.10 returns a service through a tracing proxy on every
 * access through a context. With the default tracker
 * (`{ associate: name, property: 'ctx' }`) each property access looks up
 * mixin accessors through a fresh `ctx.reflect` proxy, and each method call
 * builds a shadow context and two more proxies: about 10 µs per call measured
 * in dsh-tools and dsh-system-prompt, up to 30 µs for `sessions.flush`, on
 * paths the agent loop takes per step and per tool call.
 *
 * Contract after the call:
 * - Inside a method called as `ctx.x.method()`, `this.ctx` is still the
 *   caller's context, so registrations made through it still revert with the
 *   caller's fiber.
 * - The service has no mixin accessors (`ctx.x.prop` is never redirected to a
 *   `x.prop` mixin on the context).
 * - A method must not reach other services through `this.ctx`: without the
 *   shadow, that access is checked against the caller's `inject` list, not the
 *   service's. Keep the service's own context in another field for that.
 * - Values returned by methods are not re-traced for the caller.
 *
 * Not for callable services (`Service.invoke`): Cordis captures their tracker
 * when the service is constructed.
 */
export function untraced(service: Service): void {
  Object.defineProperty(service, Service.tracker, { writable: true, enumerable: false, value: { property: 'ctx', noShadow: true } })
}
