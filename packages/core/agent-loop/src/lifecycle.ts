/**
 * The stages of an agent's life (R-LIFE-1, R-LIFE-5), in order:
 *
 * - `built`: constructed inside a create/resume transaction; `setup` runs
 *   here. Admission is refused (`NOT_PUBLISHED`).
 * - `published`: entered in the session store and the agent registry, and
 *   announced from `agent/created` on. Admission is open; the drain does not
 *   run yet, and an idle injection is held.
 * - `started`: `agent/session-start` was emitted: the drain runs, idle
 *   injections are written.
 * - `disposing`: the teardown began (handle dispose, owner or loop unload,
 *   rollback). Admission is refused (`DISPOSED`), the open turn is aborted,
 *   the drain stops. It is final: an agent is never reused.
 *
 * The agent's *failure* (the refused-write rule, `FailureState`) is not a
 * stage: it is recorded beside the stage because it can happen while the
 * agent is `published` (an `agent/created` listener's admission the log
 * refuses) or `started`, and it outlives the start of the teardown (a failed
 * agent that is disposing still writes nothing of its own and ends its open
 * turn `error`). A failed agent stays in its stage and does no more work.
 */
export type LifecycleStage = 'built' | 'published' | 'started' | 'disposing'

/**
 * The legal transitions. Anything else is a bug in the loop.
 *
 * - `built → published`: `publish()`, between the `session/created` and the
 *   `agent/created` announcements;
 * - `published → built`: a created listener vetoed the publication (the
 *   rollback detaches both entries);
 * - `published → started`: the transaction's start, right after
 *   `agent/session-start`;
 * - `built | published | started → disposing`: `stop()`, the first step of
 *   the teardown.
 *
 * `disposing` absorbs: a transition asked for once the teardown began (a
 * start or a veto that comes late) changes nothing, as the teardown wins.
 */
const TRANSITIONS: { readonly [S in LifecycleStage]: readonly LifecycleStage[] } = {
  built: ['published', 'disposing'],
  published: ['built', 'started', 'disposing'],
  started: ['disposing'],
  disposing: [],
}

const ORDER: { readonly [S in LifecycleStage]: number } = { built: 0, published: 1, started: 2, disposing: 3 }

/** One agent's lifecycle stage, moved only along `TRANSITIONS`. */
export class Lifecycle {
  private current: LifecycleStage = 'built'
  /** The stage `disposing` was entered from: what the agent had reached before its teardown. */
  private before: LifecycleStage = 'built'

  get stage(): LifecycleStage {
    return this.current
  }

  /**
   * Whether the agent reached `stage`, now or before its teardown began: a
   * disposing agent that had been published still discards its pending
   * items, and one that had started still writes its held injections.
   */
  reached(stage: 'published' | 'started'): boolean {
    const reached = this.current === 'disposing' ? this.before : this.current
    return ORDER[reached] >= ORDER[stage]
  }

  /** Moves to `next`; ignored once disposing; throws (a loop bug) when the transition is not legal. */
  to(next: LifecycleStage): void {
    if (this.current === 'disposing') return
    if (!TRANSITIONS[this.current].includes(next)) {
      throw new Error(`dsh-agent-loop: illegal lifecycle transition ${this.current} → ${next}`)
    }
    if (next === 'disposing') this.before = this.current
    this.current = next
  }
}
