import { Context } from './cordis'
import { kScope } from './scope'

/**
 * The `this` argument that makes Cordis dispatch scope-filtered.
 *
 * Cordis asks `thisArg[Context.filter](hook.ctx)` for every listener of an
 * event and skips the listeners for which it returns false. A subject filter
 * admits global listeners (registered in a context with no scope) and the
 * listeners scoped to the same subject, and skips listeners scoped to any other
 * subject. Listeners registered with `{ global: true }` always run.
 */
export interface SubjectFilter {
  readonly subject: string
  [Context.filter](ctx: Context): boolean
}

/**
 * The filter for events about `subject`. Pass it as the first argument of
 * `ctx.emit` / `ctx.serial` / `ctx.waterfall` / `ctx.parallel`:
 * `ctx.emit(filter, 'session/event', session, event)`. It is a small frozen
 * object; an owner that dispatches often (a session, an agent) builds it once
 * and keeps it.
 */
export function subjectFilter(subject: string): SubjectFilter {
  return Object.freeze({
    subject,
    [Context.filter](ctx: Context) {
      const scope = ctx[kScope]
      return scope === undefined || scope.subject === subject
    },
  })
}
