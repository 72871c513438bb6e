import { Service } from './cordis'

/**
 * Makes Cordis hand out this service's methods without per-call shadowing,
 * the way its own `events` and `reflect` services are traced.
 *
 * The default tracker (`{ associate: name, property: 'ctx' }`) builds a shadow
 * context and proxies on every method access; measured here, `flush` cost
 * ~30 µs and `get` ~8 µs through it, on paths the agent loop takes per turn.
 * With `{ property: 'ctx', noShadow: true }` a method still sees the caller's
 * context as `this.ctx` (registrations still revert with the caller's fiber),
 * and is returned as the plain function. Given up: mixin accessors
 * (`sessions.<prop>`), and reaching other services through `this.ctx` inside
 * methods (the store uses its own context for that). The same helper lives in
 * dsh-tools and dsh-system-prompt; it can move to dsh-scope.
 */
export function untraced(service: Service): void {
  Object.defineProperty(service, Service.tracker, { writable: true, enumerable: false, value: { property: 'ctx', noShadow: true } })
}
