import type { Agent } from '@deepseek-ai/dsh-agent'
import type { SessionId } from '@deepseek-ai/dsh-session'
import { childOutcome, childProgress } from './child-outcome'
import { SubagentsError } from './errors'
import type { Slots } from './slots'
import type { ChildOutcome, SubagentProvider, SubagentRequest, SubagentResult, SubagentRun, SubagentStatus } from './types'

/** What a run needs of the service that owns it. */
export interface RunHost {
  readonly slots: Slots
  provider(): SubagentProvider
  /** The run left the queue: `subagent/started` in the parent's log. */
  logStarted(run: Run): void
  /** The run ended after it started: `subagent/finished` in the parent's log. */
  logFinished(run: Run, result: SubagentResult): void
  /** The child exists: `subagents/started`. */
  announceStarted(run: Run): void
  /** The run is over (also one cancelled in the queue): `subagents/finished`, and the run is forgotten. */
  ended(run: Run, result: SubagentResult): void
}

/**
 * One child's run: queued for a slot of its parent, then handed to the
 * provider, then over. `cancel()` (or the spawn's signal) leaves the queue at
 * once, or has the provider cancel and dispose the child.
 */
export class Run implements SubagentRun {
  readonly id: string
  readonly sessionId: SessionId
  readonly agentType: string
  readonly description: string
  readonly parent: Agent
  readonly background: boolean
  readonly callId: string | undefined
  readonly depth: number
  status: SubagentStatus = 'queued'
  agent: Agent | undefined
  private final: SubagentResult | undefined
  /** The result recorded when the parent was closed while the run ran (see `parentGone`): the run ends with it. */
  private closedEarly: SubagentResult | undefined
  private settled!: Promise<SubagentResult>
  private readonly controller = new AbortController()

  constructor(
    private readonly request: SubagentRequest,
    private readonly host: RunHost,
    private readonly external: AbortSignal | undefined,
  ) {
    this.id = request.runId
    this.sessionId = request.sessionId
    this.agentType = request.type.name
    this.description = request.description
    this.parent = request.parent
    this.background = request.background
    this.callId = request.callId
    this.depth = request.depth
  }

  begin(): void {
    const stop = () => this.cancel()
    if (this.external?.aborted) this.cancel()
    else this.external?.addEventListener('abort', stop, { once: true })
    this.settled = this.drive().then((result) => {
      this.external?.removeEventListener('abort', stop)
      this.final = result
      this.status = result.status
      this.host.ended(this, result)
      return result
    })
  }

  output(): string {
    if (this.final) return this.final.answer
    return this.agent ? childProgress(this.agent.session, 0).lastText : ''
  }

  result(): Promise<SubagentResult> {
    return this.settled
  }

  cancel(): void {
    if (this.final || this.controller.signal.aborted) return
    this.controller.abort(new SubagentsError('CANCELLED', `subagent run ${this.id} was cancelled`))
  }

  /**
   * The parent was disposed (`agent/disposed`, sent after its driver stopped
   * and before its session is detached): the run is cancelled, and a run that
   * started is closed in the parent's log now, while that log can still take
   * the record; a background child is still being stopped then, and its end
   * would come after the parent's log is gone. The record is what the child's
   * log says so far: its answer when its turn had ended (completed, or how it
   * failed), else `cancelled` with the usage of the model calls it made. The
   * run then ends with this result.
   */
  parentGone(): void {
    this.cancel()
    if (this.final || this.closedEarly || this.status !== 'running') return
    const child = this.agent
    const ended = child ? childProgress(child.session, 0).lastEnd !== undefined : false
    const outcome: ChildOutcome = child
      ? childOutcome(child.session, 0, !ended)
      : { status: 'cancelled', answer: '', usage: { inputTokens: 0, outputTokens: 0 }, modelCalls: 0, error: { code: 'CANCELLED', message: 'the subagent was stopped before it started' } }
    this.closedEarly = this.resultOf(outcome)
    this.host.logFinished(this, this.closedEarly)
  }

  private async drive(): Promise<SubagentResult> {
    const signal = this.controller.signal
    let release: () => void
    try {
      release = await this.host.slots.acquire(this.parent.id, signal)
    } catch {
      return this.resultOf({ status: 'cancelled', answer: '', usage: { inputTokens: 0, outputTokens: 0 }, modelCalls: 0, error: { code: 'CANCELLED', message: 'the subagent was cancelled before it started' } })
    }
    this.status = 'running'
    let outcome: ChildOutcome
    try {
      this.host.logStarted(this)
      outcome = await this.host.provider().run(this.request, signal, {
        started: (agent) => {
          this.agent = agent
          this.host.announceStarted(this)
        },
      })
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      outcome = { status: signal.aborted ? 'cancelled' : 'failed', answer: '', usage: { inputTokens: 0, outputTokens: 0 }, modelCalls: 0, error: { code: 'SUBAGENT_FAILED', message } }
    } finally {
      this.agent = undefined
      release()
    }
    if (this.closedEarly) return this.closedEarly
    const result = this.resultOf(outcome)
    this.host.logFinished(this, result)
    return result
  }

  private resultOf(outcome: ChildOutcome): SubagentResult {
    return Object.freeze({ runId: this.id, sessionId: this.sessionId, agentType: this.agentType, ...outcome })
  }
}
