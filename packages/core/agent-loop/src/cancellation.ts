import { AgentError, type AgentCancelCause } from '@deepseek-ai/dsh-agent'

/**
 * The private cancellation holder of one turn (R-CAN-1). Its signal covers
 * prompt policy, assembly, every step, model and tool work, recovery,
 * continuation and the terminal stop. The loop retires it just before
 * `turn/end`: from then on `cancel()` sees no open turn.
 */
export class TurnHolder {
  private readonly controller = new AbortController()
  private _cause: AgentCancelCause | undefined

  get signal(): AbortSignal {
    return this.controller.signal
  }

  get cause(): AgentCancelCause | undefined {
    return this._cause
  }

  get aborted(): boolean {
    return this.controller.signal.aborted
  }

  /**
   * Aborts because the agent failed (the refused-write rule): the turn unwinds
   * to its close like a cancel, with no cancel cause, and ends `error`.
   */
  fail(error: Error): void {
    if (!this.controller.signal.aborted) this.controller.abort(error)
  }

  /** Aborts cooperatively; the first cause wins, except that `disposed` overrides any other. */
  abort(cause: AgentCancelCause): void {
    if (!this._cause || cause.kind === 'disposed') this._cause = cause
    if (!this.controller.signal.aborted) {
      this.controller.abort(new AgentError('ABORTED', `turn cancelled (${cause.kind})`))
    }
  }
}

/** Thrown inside a turn to unwind to its close once the holder aborted. */
export class TurnAborted extends Error {
  override readonly name = 'TurnAborted'
  constructor() {
    super('the turn was cancelled')
  }
}

/** Unwinds the turn when its holder has aborted. */
export function checkAborted(holder: TurnHolder): void {
  if (holder.aborted) throw new TurnAborted()
}
