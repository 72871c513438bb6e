import type { Context } from './cordis'

/**
 * Emits `name` to every listener, each in its own try/catch, so one failing
 * observer cannot stop the others or the emitter. Failures are handed to
 * `onError` (which must not throw). `thisArg` is usually a `subjectFilter`.
 *
 * Cordis' own `emit` stops at the first listener that throws; notifications
 * whose contract says "listener failures are contained" (`session/event`,
 * `agent/*` notifications) go through here instead.
 */
export function emitContained(
  ctx: Context,
  thisArg: object | null,
  name: string,
  args: readonly unknown[],
  onError: (error: unknown) => void,
): void {
  const events = ctx.events as unknown as { dispatch(type: string, args: unknown[]): Array<(...args: unknown[]) => unknown> }
  const callbacks = events.dispatch('emit', thisArg ? [thisArg, name, ...args] : [name, ...args])
  for (const callback of callbacks) {
    try {
      const result = callback(...args)
      if (result && typeof (result as Promise<unknown>).then === 'function') {
        ;(result as Promise<unknown>).then(undefined, onError)
      }
    } catch (error) {
      onError(error)
    }
  }
}
