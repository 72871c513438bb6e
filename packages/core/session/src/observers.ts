import { rawEvents, scopeOf } from '@deepseek-ai/dsh-scope'
import type { Context, Hook } from './cordis'
import { SessionError } from './errors'
import type { Session } from './session'
import type { AnySessionEvent } from './types'

/**
 * Receives every event committed to a live session, exactly like a
 * `session/event` listener: synchronously inside `append`, in seq order, after
 * the event was validated, frozen and committed. A throw or a rejected promise
 * is contained and logged; it never fails the append. Keep it cheap: it runs
 * once per streamed chunk.
 */
export type SessionObserver = (session: Session, event: AnySessionEvent) => void | Promise<void>

export interface SessionObserveOptions {
  /**
   * Observe every session, even when registered from an agent-scoped
   * context (Cordis' `{ global: true }`). Default `false`: a scoped context
   * observes only its own agent's session, a global one every session.
   */
  global?: boolean
}

type MutableHooks = Record<string, Hook[] | undefined>

/**
 * Registers `observer` as a `session/event` listener of `ctx` without Cordis'
 * tracing wrapper, and removes it when the fiber of `ctx` is disposed (or when
 * the returned function is called; calling it twice is harmless).
 *
 * What it is: the listener record Cordis itself keeps for `ctx.on`
 * (`{ ctx, callback, global }` in the events service's list), with the plain
 * function as `callback`. So an observer is one more `session/event` listener:
 * the store's contained emitter calls it in registration order among the
 * `ctx.on` listeners, filters it by the scope of `ctx` like them, contains its
 * failures like theirs, and `internal/dispatch` tracers see the dispatch.
 *
 * What it skips: `ctx.on` wraps every listener in a proxy that re-traces `this`
 * and each argument through Cordis' traced `reflect` service on every call
 * (about a microsecond, a third of a streamed chunk's path), so that services
 * reached through the arguments see the listener's context. A session and an
 * event are not services, so an observer loses nothing by skipping it.
 * `internal/listener` interceptors are not consulted either.
 *
 * It works whether or not `ctx.sessions` is mounted (a persistence backend
 * registers before the store may exist); `ctx.sessions.observe` is the same
 * call for plugins that inject the store.
 */
export function observeSessions(ctx: Context, observer: SessionObserver, options: SessionObserveOptions = {}): () => void {
  if (typeof observer !== 'function') {
    throw new SessionError('INVALID_ARGUMENT', 'sessions.observe() takes a function (session, event) => void')
  }
  const hooks = rawEvents(ctx)._hooks as MutableHooks
  // A context without a scope passes every subject filter: marking it global skips asking, once per event.
  const global = options.global === true || scopeOf(ctx) === undefined
  const dispose = ctx.effect(() => {
    const hook: Hook = { ctx, callback: observer, global }
    ;(hooks['session/event'] ??= []).push(hook)
    return () => {
      const list = hooks['session/event']
      const index = list ? list.indexOf(hook) : -1
      if (index < 0) return
      list!.splice(index, 1)
      if (list!.length === 0) delete hooks['session/event']
    }
  }, 'sessions.observe()')
  return () => void dispose()
}
