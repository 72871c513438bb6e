import { AgentError, type AgentCancelCause } from '@deepseek-ai/dsh-agent'

/**
 * The private cancellation holder of one turn (R-CAN-1). Its signal covers
 * prompt policy, assembly, every step, model and tool work, recovery,
 * continuation and the terminal stop. The loop retires it just before
 * `turn/end`: from then on `cancel()` sees no open turn.
 */
export class TurnHolder {
  // Declared and set in the constructor: no field-initializer call per turn (see `StepState`).
  declare private readonly controller: AbortController
  /**
   * The turn's signal, read once: Node's `AbortController.signal` and
   * `AbortSignal.aborted` are getters that validate their receiver, and the
   * loop checks cancellation after every wait and at every chunk.
   */
  declare readonly signal: AbortSignal
  /**
   * Whether the signal has aborted. Only this holder's private controller can
   * abort the signal, and it sets this flag first, so the flag and
   * `signal.aborted` always agree.
   */
  declare aborted: boolean
  declare private _cause: AgentCancelCause | undefined

  constructor() {
    const controller = new AbortController()
    this.controller = controller
    this.signal = controller.signal
    this.aborted = false
    this._cause = undefined
  }

  get cause(): AgentCancelCause | undefined {
    return this._cause
  }

  /**
   * Aborts because the agent failed (the refused-write rule): the turn unwinds
   * to its close like a cancel, with no cancel cause, and ends `error`.
   */
  fail(error: Error): void {
    if (this.aborted) return
    this.aborted = true
    this.controller.abort(error)
  }

  /** Aborts cooperatively; the first cause wins, except that `disposed` overrides any other. */
  abort(cause: AgentCancelCause): void {
    if (!this._cause || cause.kind === 'disposed') this._cause = cause
    if (this.aborted) return
    this.aborted = true
    this.controller.abort(new AgentError('ABORTED', `turn cancelled (${cause.kind})`))
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
