import { LoadedLog } from '../log/loaded-log'
import type { LoadedSession, SessionLoadWarning } from '../persistence'
import { repairSession } from '../repair'
import { SessionId, type AnySessionEvent } from '../types'

/** What a backend supplies to `loadRepaired`: its reads and its appends, nothing of the repair itself. */
export interface RepairingLoad {
  /**
   * Reads every stored event of the session into `log` (`push`, or
   * `pushChunkJson` for JSON text), in seq order, and returns the load's
   * non-fatal findings (a torn tail it cut, after keeping a copy). Rejects
   * for a missing session or a corrupt record, naming where (R-PER-2).
   */
  read(log: LoadedLog): Promise<readonly SessionLoadWarning[] | void>
  /**
   * Appends `events`, the crash repairs, after the stored events, durably
   * (synced before it resolves), never rewriting an earlier record.
   */
  appendRepairs(events: readonly AnySessionEvent[]): Promise<void>
}

export interface LoadRepairedOptions {
  /**
   * Abandons the load: checked after the read and before the repairs are
   * appended, so an abandoned load never writes. A backend's `read` should
   * watch it too (see `SessionPersistence.load`).
   */
  signal?: AbortSignal
  /** The time the repair events carry (default `Date.now()`). */
  now?: number
}

/**
 * A load with crash repair (R-PER-3), the same for every backend: reads the
 * log (`backend.read`), plans the repair of whatever the crash left open
 * (`repairSession`), appends the repairs durably (`backend.appendRepairs`)
 * and adds them to the loaded log, which it returns with the repairs and the
 * read's warnings. Repairing a repaired log appends nothing.
 *
 * Rejects with what `read` or `appendRepairs` rejected with, or with the
 * signal's reason once it has aborted (nothing is appended then).
 */
export async function loadRepaired(id: string, backend: RepairingLoad, options: LoadRepairedOptions = {}): Promise<LoadedSession> {
  const { signal } = options
  signal?.throwIfAborted()
  const log = new LoadedLog()
  const warnings = (await backend.read(log)) ?? []
  signal?.throwIfAborted()
  const plan = repairSession(log.events, options.now === undefined ? {} : { now: options.now })
  if (plan.events.length > 0) {
    await backend.appendRepairs(plan.events)
    for (const event of plan.events) log.push(event)
  }
  return { id: SessionId(id), events: log.events, repairs: plan.repairs, warnings: [...warnings] }
}
