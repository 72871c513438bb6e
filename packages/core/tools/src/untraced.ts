import { Service } from './cordis'

/**
 * Makes Cordis hand out this service's methods without per-call shadowing,
 * the way its own `events` and `reflect` services are traced.
 *
 * A service's tracker decides what Cordis does on every access through a
 * context. The default one (`{ associate: name, property: 'ctx' }`) looks up
 * mixin accessors and builds a shadow context and two proxies for each method
 * call; measured here that was ~10 µs per call, on paths the loop takes per
 * step and per tool call. With `{ property: 'ctx', noShadow: true }` a method
 * still sees the caller's context as `this.ctx` (registrations still revert
 * with the caller's fiber), but it is returned as the plain function. What is
 * given up: the service defines no mixin accessors (`<name>.<prop>`), and code
 * inside its methods must not reach other services through `this.ctx` (it
 * would be checked against the caller's injections); these services keep
 * their own context for that.
 */
export function untraced(service: Service): void {
  Object.defineProperty(service, Service.tracker, { writable: true, enumerable: false, value: { property: 'ctx', noShadow: true } })
}
