import type { Agent, AgentHandle, AgentOptions } from '@deepseek-ai/dsh-agent'
import { openAgent, type AgentObserver } from '../agent-session'
import type { DemoApp } from '../app'
import { describeError } from '../describe-error'
import { agentFailure, describeLoadReport, loadReportOf } from '../failures'
import { watchSubagents } from '../subagents'
import { TurnView } from '../turn-view'
import type { InteractiveMachine } from './machine'
import type { Output } from './output'

/**
 * The agent the interactive command line drives, one at a time: opening a
 * session (fresh or resumed), routing its events to the screen and the
 * machine, and closing it so that its file is released (and deleted when it
 * holds nothing but its meta). It remembers whether any session of this run
 * stopped being saved, for the exit status.
 */
export class AgentSlot {
  private handle: AgentHandle | undefined
  private view: TurnView | undefined
  /** Stops showing the current agent's subagents' activity. */
  private unwatch: (() => void) | undefined
  /** `code: message` of the last failed turn, already in its summary line. */
  private summarized: string | undefined
  /** A session of this run could not be saved (`PERSISTENCE_FAILED`, `APPEND_REFUSED`, a failed final flush). */
  failed = false
  /** Sessions whose save failure was already reported. */
  private readonly unsaved = new Set<string>()

  constructor(
    private readonly app: DemoApp,
    private readonly output: Output,
    private readonly machine: InteractiveMachine,
    private readonly options: {
      cwd: string
      agentOptions: AgentOptions
      redact(text: string): string
      onProgress(): void
      /** What each turn's summary line adds for `agent` (its permission mode). */
      status?(agent: Agent): string | undefined
    },
  ) {}

  /** The current agent's handle (after the first `open`). */
  get current(): AgentHandle {
    if (!this.handle) throw new Error('no agent is open yet')
    return this.handle
  }

  /** Opens a fresh session, or resumes `resume`, and makes it current; the previous one is closed. Rejects when it cannot be opened (the previous one stays). */
  async switchTo(resume: string | undefined): Promise<AgentHandle> {
    const old = this.handle
    const status = () => (this.handle && this.options.status ? this.options.status(this.handle.agent) : undefined)
    const view = new TurnView({ answer: this.output.answer, notes: this.output.out, style: this.output.style, spinner: this.output.spinner, redact: this.options.redact, status })
    const opened = await openAgent(this.app.ctx, { cwd: this.options.cwd, resume, agentOptions: this.options.agentOptions }, this.observer(view))
    this.handle = opened
    this.view = view
    this.unwatch?.()
    this.unwatch = watchSubagents(this.app.ctx, opened.agent, (text) => this.output.say('note', text))
    this.summarized = undefined
    if (old) await this.close(old)
    return opened
  }

  /** What loading the current (resumed) session repaired or warned about, as lines. */
  loadReportLines(): string[] {
    const report = this.handle && loadReportOf(this.handle)
    return report ? describeLoadReport(report) : []
  }

  /** Stops the spinner before something else is printed. */
  pause(): void {
    this.view?.pause()
  }

  /** Closes the current agent (the last step of an exit). */
  async closeCurrent(): Promise<void> {
    if (this.handle) await this.close(this.handle)
  }

  private observer(view: TurnView): AgentObserver {
    return {
      onEvent: (_session, event) => {
        this.options.onProgress()
        // One agent runs turns at a time: a session is switched only between turns.
        if (event.type === 'turn/start') this.machine.turn(true)
        else if (event.type === 'turn/end') {
          this.machine.turn(false)
          const reason = event.data.reason
          this.summarized = reason.kind === 'error' ? `${reason.failure.code}: ${reason.failure.message}` : undefined
        }
        view.onEvent(event)
      },
      onStatus: (agent, status) => {
        if (agent === this.handle?.agent) this.machine.status(status)
      },
      onError: (agent, turn, step, error) => {
        const failure = agentFailure(turn, step, error)
        if (`${failure.code}: ${failure.message}` !== this.summarized) this.output.say('error', `✗ ${failure.code}: ${failure.message}`)
        if (!failure.persistence) return
        this.failed = true
        this.unsaved.add(agent.id)
        if (agent === this.handle?.agent) {
          this.output.say('error', `✗ session ${agent.id} is no longer being saved and takes no more prompts: /new starts another one, /exit quits`)
        }
      },
    }
  }

  /**
   * Disposes an agent and waits until its file is released (so it can be
   * resumed right away), saying so when its log could not be written. A
   * session that holds nothing but its meta (opened, never used) is deleted
   * rather than kept in the list.
   */
  private async close(target: AgentHandle): Promise<void> {
    const { id, session } = target.agent
    const persistence = this.app.ctx.sessionPersistence
    let problem: unknown
    // Whatever the loop reported, nothing is called saved that is not on disk.
    await this.app.ctx.sessions.flush(session).catch((error: unknown) => (problem = error))
    await target.dispose()
    this.options.onProgress()
    await persistence.flush(id).catch((error: unknown) => (problem ??= error))
    this.options.onProgress()
    if (problem !== undefined) {
      this.failed = true
      if (!this.unsaved.has(id)) this.output.say('error', `✗ session ${id} was not saved completely: ${describeError(problem)}`)
      this.unsaved.add(id)
    }
    if (session.events.length === 1) await persistence.delete(id).catch(() => {})
  }
}
