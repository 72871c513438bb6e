import Schema from 'schemastery'
import { Context, Service } from './cordis'
import { InvariantError } from './errors'
import type { InvariantCheck, InvariantPolicy, InvariantViolation } from './types'

declare module 'cordis' {
  interface Context {
    invariants: Invariants
  }
  interface Events {
    /**
     * An invariant was found broken (by `check()` or an eager `report()`),
     * whatever the policy. Observation only.
     * @mode emit
     */
    'invariants/violation'(violation: InvariantViolation): void
  }
}

const MAX_KEPT = 1000

/**
 * `ctx.invariants`: runtime invariant checks with a configurable policy.
 *
 * Packages register checks (companion entry points such as
 * `@deepseek-ai/dsh-agent-loop/invariant`); `check()` runs them all. Checks
 * that watch events can also `report()` eagerly. What happens to a violation
 * is the policy's: `throw` (tests: `check()` rejects, `report()` throws),
 * `log` (production default: logged as an error) or `collect` (kept in
 * `violations` only). Every policy keeps the last 1,000 violations and emits
 * `invariants/violation`.
 */
export class Invariants extends Service {
  static readonly Config: Schema<Invariants.Config> = Schema.object({
    policy: Schema.union(['throw', 'log', 'collect'] as const)
      .default('log')
      .description('What a violation does: throw (tests), log (production) or collect.'),
  })

  private readonly checks = new Map<string, InvariantCheck[]>()
  private readonly kept: InvariantViolation[] = []
  /** Violations noticed by event listeners under `throw`, awaiting the next `check()`. */
  private readonly held: InvariantViolation[] = []
  private readonly home: Context
  policy: InvariantPolicy

  constructor(ctx: Context, config: Invariants.Config = {}) {
    super(ctx, 'invariants')
    this.home = ctx
    this.policy = config.policy ?? 'log'
  }

  /** Violations found so far (newest last, at most 1,000). */
  get violations(): readonly InvariantViolation[] {
    return this.kept
  }

  /** The names of the registered invariants. */
  names(): string[] {
    return [...this.checks.keys()].sort()
  }

  /** Registers `check` under `name`, reverting with the caller's fiber. */
  register(name: string, check: InvariantCheck): () => void {
    const dispose = this.ctx.effect(() => {
      let list = this.checks.get(name)
      if (!list) this.checks.set(name, (list = []))
      list.push(check)
      return () => {
        const current = this.checks.get(name)
        if (!current) return
        const index = current.indexOf(check)
        if (index >= 0) current.splice(index, 1)
        if (current.length === 0) this.checks.delete(name)
      }
    }, `invariants.register(${name})`)
    return () => void dispose()
  }

  /** Reports one violation now, under the policy (throws under `throw`). */
  report(invariant: string, message: string, details?: unknown): void {
    const violation: InvariantViolation = details === undefined ? { invariant, message } : { invariant, message, details }
    this.record([violation])
    if (this.policy === 'throw') throw new InvariantError([violation])
  }

  /**
   * Reports a violation found inside an event listener. Under `log` and
   * `collect` it is recorded at once, as `report` does. Under `throw` it is
   * held, and the next `check()` rejects with it: throwing from the listener
   * would veto a publication (`agent/created`) or vanish in a contained dispatch
   * (`session/event`). At most 1,000 are held.
   */
  notice(violation: InvariantViolation): void {
    if (this.policy !== 'throw') {
      this.record([violation])
      return
    }
    if (this.held.length < MAX_KEPT) this.held.push(violation)
  }

  /**
   * Runs every registered check (or only those named) and returns what they
   * found, after any violation noticed since the last check. Under `throw` it
   * rejects with an `InvariantError` when anything was found.
   */
  async check(names?: readonly string[]): Promise<InvariantViolation[]> {
    const found: InvariantViolation[] = []
    for (let i = 0; i < this.held.length; ) {
      if (names && !names.includes(this.held[i]!.invariant)) i++
      else found.push(...this.held.splice(i, 1))
    }
    for (const [name, list] of [...this.checks]) {
      if (names && !names.includes(name)) continue
      for (const check of [...list]) {
        try {
          const result = await check()
          if (!result) continue
          // A string is an Iterable<string>: iterated, one message would become a violation per character.
          if (typeof result === 'string') {
            found.push({ invariant: name, message: result })
            continue
          }
          for (const item of result) found.push(typeof item === 'string' ? { invariant: name, message: item } : item)
        } catch (error) {
          found.push({ invariant: name, message: `the check itself failed: ${error instanceof Error ? error.message : String(error)}` })
        }
      }
    }
    this.record(found)
    if (found.length && this.policy === 'throw') throw new InvariantError(found)
    return found
  }

  private record(violations: InvariantViolation[]) {
    if (violations.length === 0) return
    const logger = this.home.logger('dsh-invariants')
    for (const violation of violations) {
      this.kept.push(violation)
      if (this.kept.length > MAX_KEPT) this.kept.shift()
      if (this.policy === 'log') logger.error('[%s] %s', violation.invariant, violation.message)
      try {
        this.home.emit('invariants/violation', violation)
      } catch (error) {
        logger.warn(error)
      }
    }
  }
}

export namespace Invariants {
  export interface Config {
    /** Default `log`. */
    policy?: InvariantPolicy
  }
}
