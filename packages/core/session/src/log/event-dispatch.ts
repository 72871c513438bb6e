import type { ContainedEmitter, SubjectFilter } from '@deepseek-ai/dsh-scope'
import { Context, type Hook } from '../cordis'
import type { AnySessionEvent } from '../types'
import { eventTraceKeeps, traceKeeps, unwrapListener } from './bound-listeners'

const NAME = 'session/event'

type FilterFn = (this: object, ctx: Hook['ctx']) => boolean

const noHooks: readonly Hook[] = []

/** A listener bound to the dispatch's filter (see `bound`). */
type Listener = (session: object, event: AnySessionEvent) => unknown

/**
 * One session's `session/event` dispatch, with the subject filter's verdicts
 * cached: what `emitter.emit(filter, 'session/event', [session, event],
 * onError)` does, without asking the filter about every listener on every
 * event (a session publishes once per streamed chunk, and the filter reads
 * the listener's context through Cordis' context proxy).
 *
 * The verdict of a subject filter on a listener depends only on the scope of
 * the listener's context, which is fixed when the context is made (dsh-scope's
 * `scoped`). So the listeners it admits are computed again only when Cordis'
 * list for `session/event` changed: another array, another length, or another
 * record at some position (every registration is a new record). Checking
 * that is one identity comparison per listener.
 *
 * Semantics, the same as the contained emitter's (dsh-scope's
 * `dispatchInPlace`): the listeners called are those registered when the
 * dispatch starts, in registration order (one added during the dispatch is
 * not called, one removed during it is still called this once: the admitted
 * list is replaced, never changed, when Cordis' list changes); `{ global:
 * true }` listeners always run; each is called with the filter as `this` and
 * `(session, event)`; a synchronous throw or a rejected promise goes to
 * `onError` and the next listener runs. When `internal/dispatch` tracers are
 * registered, the dispatch goes through the contained emitter itself, which
 * notifies them.
 *
 * A listener `ctx.on` registered is called through Cordis' proxy only when
 * the proxy would change something: when the filter, the session and the
 * event all pass `trace` unchanged (`traceKeeps`, always so for the objects
 * this package builds), the function the proxy wraps is called directly with
 * them (`bound-listeners.ts`), which is what the proxy would do.
 */
export class SessionEventDispatch {
  /** Cordis' list when the admitted list was computed, and its records then. */
  private seen: readonly Hook[] = noHooks
  private records: Hook[] = []
  /** The callbacks of the records the filter admits, in order; replaced, never mutated. */
  private admitted: Listener[] = []
  /** The same listeners, each as the function `ctx.on` wrapped when known (see the class comment); `admitted` when the filter or the session would be traced. */
  private direct: Listener[] = []

  constructor(
    private readonly emitter: ContainedEmitter,
    private readonly filter: SubjectFilter,
    private readonly session: object,
    private readonly onError: (error: unknown) => void,
  ) {
    // The listeners are admitted now rather than by the session's first
    // dispatch: a branch that `emit` takes once per session was taken, in the
    // process's first session, before V8 kept feedback for it, and would
    // deoptimize `emit` (and the append path that inlined it) when the next
    // session publishes its first event.
    const hooks = emitter.events._hooks[NAME]
    if (hooks !== undefined) this.admit(hooks)
  }

  emit(event: AnySessionEvent): void {
    const all = this.emitter.events._hooks
    if (all['internal/dispatch']?.length) {
      this.emitter.emit(this.filter, NAME, [this.session, event], this.onError)
      return
    }
    const hooks = all[NAME]
    if (hooks === undefined) return
    if (hooks !== this.seen || !sameRecords(hooks, this.records)) this.admit(hooks)
    const admitted = eventTraceKeeps(event) ? this.direct : this.admitted
    const count = admitted.length
    if (count === 0) return
    const { session, onError } = this
    for (let i = 0; i < count; i++) {
      try {
        const result = callListener(admitted[i]!, session, event) as PromiseLike<unknown> | null | undefined
        if (result !== undefined && result !== null && typeof result.then === 'function') result.then(undefined, onError)
      } catch (error) {
        onError(error)
      }
    }
  }

  private admit(hooks: readonly Hook[]): void {
    const check = (this.filter as unknown as Record<symbol, FilterFn | undefined>)[Context.filter]
    const admitted: Function[] = []
    for (const hook of hooks) {
      if (hook.global || check === undefined || check.call(this.filter, hook.ctx)) admitted.push(hook.callback)
    }
    this.seen = hooks
    this.records = hooks.slice()
    const filter = this.filter
    this.admitted = admitted.map((callback) => bound(callback, filter))
    this.direct = traceKeeps(filter) && traceKeeps(this.session) ? admitted.map((callback) => bound(unwrapListener(callback), filter)) : this.admitted
  }
}

/** `Function.prototype.bind` as the module found it: a listener's own `bind`, or a later replacement, is not used. */
const bind = Function.prototype.bind

/**
 * `callback` bound to `filter` as its `this`, made when the listener list is admitted: `emit` then calls it with
 * `(session, event)` and reads no property of the listener per event (a `call` replaced later, or a proxy's `get`
 * trap, changes nothing), where `Reflect.apply` with an argument list cost about 40 ns per listener and event.
 */
function bound(callback: Function, filter: object): Listener {
  return Reflect.apply(bind, callback, [filter]) as Listener
}

/**
 * Calls one admitted listener: the dispatch's one call site for listeners, in
 * a function of its own so that the session's first log can give it the type
 * feedback of more than one target before any dispatch is optimized
 * (`primeListenerCalls`, run by `chunk-feedback.ts`).
 *
 * Why: the admitted listeners are bound functions made per session (`bound`).
 * A call site that has seen one target only is optimized as a call of that
 * very function (inlined into the session's append, with the dispatch), and
 * the next session's first event, whose bound listener is another function,
 * deoptimized that whole append path ("wrong call target", at the start of the
 * process's second session's first answer, with one `session/event`
 * listener); V8 then marks the site as megamorphic, a call of whatever
 * function comes, for good. Fed two targets first, the site is megamorphic
 * from the start: the same optimized code as after that deoptimization,
 * without it.
 */
export function callListener(listener: Listener, session: object, event: AnySessionEvent): unknown {
  return listener(session, event)
}

/**
 * Calls a few bound no-op functions, each a new one, through `callListener`
 * (see there), on objects nobody keeps. V8 keeps a function's type feedback
 * only after a few calls, hence more calls than targets.
 */
export function primeListenerCalls(session: object, event: AnySessionEvent): void {
  const filter = {}
  for (let i = 0; i < 16; i++) callListener(bound(ignore, filter), session, event)
}

function ignore(): undefined {
  return undefined
}

function sameRecords(hooks: readonly Hook[], records: readonly Hook[]): boolean {
  const count = hooks.length
  if (count !== records.length) return false
  for (let i = 0; i < count; i++) if (hooks[i] !== records[i]) return false
  return true
}

