import type { SubjectFilter } from '@deepseek-ai/dsh-scope'
import { symbols, type Context, type Events } from './cordis'

type Name = keyof Events & string
type Args<K extends Name> = Parameters<Events[K]>
/** A waterfall's arguments without the trailing `next`. */
type Head<K extends Name> = Args<K> extends [...infer H, unknown] ? H : never
type Result<K extends Name> = Awaited<ReturnType<Events[K]>>

interface RawEvents {
  _hooks: Record<string, unknown[] | undefined>
  serial(...args: unknown[]): Promise<unknown>
  waterfall(...args: unknown[]): unknown
}

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
    const traced = home.events as unknown as Record<symbol, RawEvents | undefined>
    this.events = traced[symbols.original] ?? (home.events as unknown as RawEvents)
  }

  /** Whether a dispatch of `name` would reach anyone. */
  heard(name: Name): boolean {
    const hooks = this.events._hooks
    return !!hooks[name]?.length || !!hooks['internal/dispatch']?.length
  }

  /** A waterfall whose innermost step is `inner` (the default decision). */
  async waterfall<K extends Name>(name: K, args: Head<K>, inner: () => Result<K> | Promise<Result<K>>): Promise<Result<K>> {
    if (!this.heard(name)) return inner()
    return (await this.events.waterfall(this.filter, name, ...args, async () => inner())) as Result<K>
  }

  /** A serial checkpoint: the first non-nullish result, or `undefined`. */
  async serial<K extends Name>(name: K, args: Args<K>): Promise<Result<K> | undefined> {
    if (!this.heard(name)) return undefined
    return (await this.events.serial(this.filter, name, ...args)) as Result<K> | undefined
  }
}
