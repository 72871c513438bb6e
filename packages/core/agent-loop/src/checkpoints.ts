import { heard, rawEvents, type RawEvents, type SubjectFilter } from '@deepseek-ai/dsh-scope'
import type { Context, Events } from './cordis'

type Name = keyof Events & string
type Args<K extends Name> = Parameters<Events[K]>
/** A waterfall's arguments without the trailing `next`. */
type Head<K extends Name> = Args<K> extends [...infer H, unknown] ? H : never
type Result<K extends Name> = Awaited<ReturnType<Events[K]>>

/**
 * One agent's `agent/*` checkpoints, dispatched scope-filtered on Cordis'
 * events service itself.
 *
 * Reaching `ctx.waterfall` through a context builds tracing proxies (and an
 * `Error`) on every access, and a waterfall allocates its `next` closures even
 * with no listener; a step passes six checkpoints, so the loop holds the raw
 * service once and skips a dispatch nobody listens to (nor traces through
 * `internal/dispatch`): the default decision is then used directly.
 */
export class Checkpoints {
  private readonly events: RawEvents

  constructor(
    home: Context,
    readonly filter: SubjectFilter,
  ) {
    this.events = rawEvents(home)
  }

  /** Whether a dispatch of `name` would reach anyone. */
  heard(name: Name): boolean {
    return heard(this.events, name)
  }

  /**
   * A waterfall whose innermost step is `inner` (the default decision). With
   * no listener it returns `inner()` as is (no promise of its own): callers
   * `await` the result either way.
   */
  waterfall<K extends Name>(name: K, args: Head<K>, inner: () => Result<K> | Promise<Result<K>>): Result<K> | Promise<Result<K>> {
    if (!this.heard(name)) return inner()
    const dispatch = this.events.waterfall as (...args: unknown[]) => Promise<Result<K>>
    return dispatch.call(this.events, this.filter, name, ...args, async () => inner())
  }

  /** A serial checkpoint: the first non-nullish result, or `undefined` (synchronously, with no listener). */
  serial<K extends Name>(name: K, args: Args<K>): Result<K> | undefined | Promise<Result<K> | undefined> {
    if (!this.heard(name)) return undefined
    const dispatch = this.events.serial as (...args: unknown[]) => Promise<Result<K> | undefined>
    return dispatch.call(this.events, this.filter, name, ...args)
  }
}
