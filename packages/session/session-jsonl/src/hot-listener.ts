import type { Context } from './cordis'

type Hooks = Record<string, Array<{ ctx: Context; callback: (...args: any[]) => unknown; global?: boolean }>>

/**
 * Registers a global listener for `name` without Cordis' tracing wrapper, and
 * removes it when the fiber of `ctx` is disposed.
 *
 * `ctx.on` wraps every listener in a proxy that re-traces `this` and each
 * argument on every call, so that services reached through them see the
 * listener's context. That costs about a microsecond per call, which matters
 * for `session/event` (hundreds of thousands of `assistant/chunk` events per
 * second) and buys nothing for arguments that are not services (a session and
 * an event). This writes the hook record Cordis itself keeps
 * (`ctx.events._hooks`, `{ ctx, callback, global }`), which dispatch filters
 * and calls like any other; Cordis is pinned to an exact version, and the
 * tests check that the listener runs and is removed on disposal.
 */
export function onHot<K extends string>(ctx: Context, name: K, callback: (...args: any[]) => unknown): void {
  ctx.effect(() => {
    const hooks = (ctx.events as unknown as { _hooks: Hooks })._hooks
    const hook = { ctx, callback, global: true }
    ;(hooks[name] ??= []).push(hook)
    return () => {
      const list = hooks[name]
      const index = list ? list.indexOf(hook) : -1
      if (index < 0) return
      list!.splice(index, 1)
      if (list!.length === 0) delete hooks[name]
    }
  }, `ctx.on(${JSON.stringify(name)}) (untraced)`)
}
