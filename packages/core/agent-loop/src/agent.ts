import {
  AgentError,
  admitInput,
  agentEvents,
  resolveAgentInput,
  type Agent,
  type AgentCancelCause,
  type AgentEventEmitter,
  type AgentInput,
  type AgentOptions,
  type AgentStatus,
  type CancelOptions,
  type Inbox,
  type ResolvedAgentInput,
} from '@deepseek-ai/dsh-agent'
import { newMessageId, type MessageId } from '@deepseek-ai/dsh-llm'
import { SessionError, appendBuilt, appendChecked, type Session, type SessionEvent, type SessionEventMap, type SessionEventType, type SessionId } from '@deepseek-ai/dsh-session'
import type { Context } from './cordis'
import { Checkpoints } from './checkpoints'
import { pluginBug } from './decision-checks'
import { FailureState, appendRefused, persistenceFailed } from './failure'
import { InboxState } from './inbox'
import { InjectionRouter, type InjectionHost } from './injections'
import { Lifecycle } from './lifecycle'
import { MaintenanceQueue } from './maintenance'
import type { LoopEnvironment } from './loop-environment'
import { RequestConfig } from './request-config'
import { Drain } from './drain'
import type { TurnHost } from './turn-host'
import type { TurnState } from './turn-state'

/**
 * The concrete agent (package-internal). It owns one session for its whole
 * life and drives it: admission and the durable inbox, the drain (`drain.ts`)
 * that runs turns one at a time, cancellation, maintenance and teardown,
 * along its lifecycle stages (`lifecycle.ts`). The turn itself is `runTurn`,
 * which sees this agent only as its `TurnHost` (`turn-host.ts`); injections
 * are routed by its `InjectionRouter` (`injections.ts`), and each request's
 * configuration and header by its `RequestConfig` (`request-config.ts`).
 *
 * Everything the loop writes goes through `append` (the refused-write rule,
 * see `FailureState`): a refused append or a failed flush fails the agent
 * for good, and the drain stops.
 */
export class ReactLoopAgent implements Agent, TurnHost, InjectionHost {
  readonly events: AgentEventEmitter
  readonly checkpoints: Checkpoints
  readonly inboxState: InboxState
  readonly logger: ReturnType<Context['logger']>
  /** The request configuration and the last logged header. */
  readonly requests: RequestConfig
  /** Where an `inject()` goes (R-IN-7). */
  readonly injections: InjectionRouter = new InjectionRouter(this)
  /** Set by the first refused append or failed flush: the agent takes no more work. */
  readonly failed = new FailureState()
  /** Where the agent is in its life: admission opens at `published`, the drain runs at `started`. */
  readonly lifecycle = new Lifecycle()
  /** The open turn (from before its claim until just before `turn/end`). */
  openTurn: TurnState | undefined

  private _status: AgentStatus = 'idle'
  /** A wakeup came since the drain last ended: pending inbox work may run (resumed items stay parked until one). */
  woken = false
  /** The drain (`drain.ts`). */
  private readonly drain = new Drain(this)
  readonly maintenance = new MaintenanceQueue()
  private readonly flushes = new Set<Promise<void>>()
  /** An admission flush is scheduled and has not started: later admissions of the burst share it. */
  private admissionFlushQueued = false
  private idleWaiters: Array<() => void> = []
  /** From a terminal stop until its turn's flush: steering admitted meanwhile is discarded. */
  private terminalWindow = false
  /** The turn a `cancel()` call is cancelling, while that call runs (its notifications may call `cancel()` again). */
  private cancelling: TurnState | undefined = undefined

  constructor(
    readonly env: LoopEnvironment,
    readonly session: Session,
    readonly ctx: Context,
    readonly options: Readonly<AgentOptions>,
    resumed: boolean,
  ) {
    this.events = agentEvents(env.home, this)
    this.checkpoints = new Checkpoints(env.home, this.events.filter)
    this.inboxState = new InboxState(this, this.events)
    this.logger = env.home.logger('dsh-agent-loop')
    this.requests = new RequestConfig(this.checkpoints, env.llm, this, session, options, resumed)
    if (resumed) {
      // A fork's seed belongs to its parent: its inbox events are not the child's pending work.
      this.inboxState.rebuild(session, 1 + (session.meta.seedLength ?? 0))
    }
  }

  /** The agent as plugins see it (`TurnHost`): this object. */
  get agent(): Agent {
    return this
  }

  get id(): SessionId {
    return this.session.id
  }

  get inbox(): Inbox {
    return this.inboxState.projection
  }

  get status(): AgentStatus {
    return this._status
  }

  /** Whether the teardown began (`TurnHost`, `InjectionHost`). */
  get disposing(): boolean {
    return this.lifecycle.stage === 'disposing'
  }

  // ── admission (R-IN) ────────────────────────────────────────────────

  send(input: ResolvedAgentInput): MessageId {
    this.assertAdmissible()
    const id = newMessageId()
    const message = admitInput(input, id)
    try {
      if (message.target === 'next-step' && !message.wakeup) {
        this.injections.route(message.id, message)
        return id
      }
      if (message.target === 'next-step' && this.terminalWindow) {
        // A terminal stop stays authoritative until its flush: late steering is dropped.
        this.inboxState.enqueue(message)
        this.inboxState.discard([message])
        this.flushAdmission()
        return id
      }
      this.inboxState.enqueue(message)
      this.flushAdmission()
    } catch (error) {
      // The log refused this admission's write: the agent failed, and the caller learns it first.
      if (error !== this.failed.error) throw error
      this.reportOutsideTurn()
      throw this.failed.refusal()!
    }
    if (message.wakeup) this.wake()
    return id
  }

  followup(input: AgentInput): MessageId {
    return this.send(resolveAgentInput(input, 'next-turn', true))
  }

  queue(input: AgentInput): MessageId {
    return this.send(resolveAgentInput(input, 'next-turn', false))
  }

  steer(input: AgentInput): MessageId {
    return this.send(resolveAgentInput(input, 'next-step', true))
  }

  inject(input: AgentInput): MessageId {
    return this.send(resolveAgentInput(input, 'next-step', false))
  }

  private assertAdmissible(): void {
    const stage = this.lifecycle.stage
    if (stage === 'disposing') throw new AgentError('DISPOSED', `agent ${this.id} is disposed`)
    const refusal = this.failed.refusal()
    if (refusal) throw refusal
    if (stage === 'built') {
      throw new AgentError(
        'NOT_PUBLISHED',
        `agent ${this.id} is not published yet: it accepts input from its agent/created announcement on (not from setup or a session/created listener)`,
      )
    }
  }

  // ── the refused-write rule ───────────────────────────────────────────

  /**
   * Appends to the log (`how`: `session.append`, `appendBuilt` or `appendChecked`). A throw of the log
   * (it refused the event) fails the agent with `APPEND_REFUSED` and is rethrown as the agent's failure,
   * so the caller unwinds and never writes that event again.
   */
  append<K extends SessionEventType>(type: K, data: SessionEventMap[K], how?: 'built' | 'checked'): SessionEvent<K> {
    try {
      return how === undefined ? this.session.append(type, data) : how === 'built' ? appendBuilt(this.session, type, data) : appendChecked(this.session, type, data)
    } catch (error) {
      throw this.fail(appendRefused(this.id, type, error))
    }
  }

  /** `append` for a listener's value: the log's data check refusing it is the plugin's bug (`TurnHost.appendDecided`). */
  appendDecided<K extends SessionEventType>(event: string, type: K, data: SessionEventMap[K]): SessionEvent<K> {
    try {
      return this.session.append(type, data)
    } catch (error) {
      // Refused before anything was committed: the plugin's value, not the log, is broken.
      if (error instanceof SessionError && error.code === 'INVALID_EVENT') throw pluginBug(event, error.message)
      throw this.fail(appendRefused(this.id, type, error))
    }
  }

  /** The refused-write rule for a write the turn made on the session itself (`TurnHost.refused`). */
  refused(type: string, error: unknown): AgentError {
    return this.fail(appendRefused(this.id, type, error))
  }

  /** `append` for data the loop built from admitted, frozen values (`BuiltLogWriter`). */
  appendBuilt<K extends SessionEventType>(type: K, data: SessionEventMap[K]): SessionEvent<K> {
    // `append(type, data, 'built')` without its branches: most of a turn's events come this way.
    try {
      return appendBuilt(this.session, type, data)
    } catch (error) {
      throw this.fail(appendRefused(this.id, type, error))
    }
  }

  /** Flushes the log (before a step's request, at a turn's end); a rejection fails the agent (`PERSISTENCE_FAILED`) and is rethrown as its failure; `undefined` when `ctx.sessions.flushes` says there is nothing to do. */
  flush(): Promise<void> | undefined {
    const sessions = this.env.sessions
    if (!sessions.flushes(this.session)) return undefined
    return sessions.flush(this.session).then(undefined, this.flushFailed) // one derived promise, no async frame
  }

  /** Writes the injections held while maintenance ran (the drain, once a task settled). */
  readonly releaseInjections = (): void => {
    this.injections.release()
  }

  private readonly flushFailed = (error: unknown): never => {
    throw this.fail(persistenceFailed(this.id, error))
  }

  /**
   * Fails the agent (the first failure stands and is returned): queued
   * maintenance is refused, running maintenance and the open turn are
   * aborted. The open turn then closes `error` and reports the failure;
   * outside a turn, the caller reports it (`reportOutsideTurn`).
   */
  fail(error: AgentError): AgentError {
    const failure = this.failed.record(error)
    if (failure !== error) {
      // A consequence of the first failure (a later flush of a broken writer, say): not reported again.
      if (error.code !== failure.code) this.logger.warn('after %s, also: %s', failure.code, error.message)
      return failure
    }
    this.maintenance.rejectQueued(() => this.failed.refusal())
    this.maintenance.abortRunning(failure)
    this.openTurn?.fail(failure)
    return failure
  }

  /**
   * Reports the failure with `agent/error` (once) unless a turn is open: that
   * turn reports it when it closes. Outside a turn it names the last turn (or
   * 0) and no step.
   */
  reportOutsideTurn(): void {
    if (this.openTurn) return
    this.reportFailure(this.session.lastTurn, undefined)
  }

  /** Emits `agent/error (turn, step, failure)` once for the agent's failure. */
  reportFailure(turn: number, step: number | undefined): void {
    if (this.failed.claimReport()) this.events.emit('agent/error', turn, step, this.failed.error)
  }

  /**
   * After each burst of admissions that logged `inbox/enqueue` (durability
   * `'step'`): one flush, started on the next microtask so that the whole
   * burst shares it. Tracked: `whenIdle()` and dispose wait for it.
   */
  private flushAdmission(): void {
    // With nothing to flush (no persistence), no flush is scheduled: there is nothing to wait for.
    if (this.env.durability !== 'step' || this.admissionFlushQueued || !this.env.sessions.flushes(this.session)) return
    this.admissionFlushQueued = true
    this.track(Promise.resolve().then(this.flushAdmitted))
  }

  /** The admission burst's flush (made once per agent: no closure, and no context, per admission). */
  private readonly flushAdmitted = (): Promise<void> => {
    this.admissionFlushQueued = false
    return this.env.sessions.flush(this.session)
  }

  // ── the drain ─────────────────────────────────────────────────────────

  private wake(): void {
    this.woken = true
    this.kick()
  }

  /** Starts the drain unless it runs already. Called on wakeups and when publication completes. */
  kick(): void {
    if (this.drain.running || this.lifecycle.stage !== 'started' || !this.hasWork()) return
    this.drain.start()
  }

  /**
   * Maintenance, or woken inbox work: resumed items (steering included) stay
   * parked until a wakeup. A failed agent has none: what is pending stays in
   * the log for a resume.
   */
  hasWork(): boolean {
    if (this.failed.error) return false
    return this.maintenance.pending || (this.woken && (this.inboxState.hasSteering || this.inboxState.hasTurnWork))
  }

  /** Sets the status and announces a change (`agent/status`). */
  setStatus(status: AgentStatus): void {
    if (this._status === status) return
    this._status = status
    this.events.emit('agent/status', status)
  }

  /** Whether an injection with no open turn waits (`InjectionHost`): before `agent/session-start`, or while maintenance runs. */
  get holdsIdleInjections(): boolean {
    return !this.lifecycle.reached('started') || this.maintenance.running
  }

  /** Starts a tracked flush nobody awaits (`InjectionHost`): after a one-shot injection turn. */
  flushLater(): void {
    if (this.env.sessions.flushes(this.session)) this.track(this.env.sessions.flush(this.session))
  }

  /** Tracks a flush that nobody awaits (`whenIdle()` and dispose wait for it); a rejection fails the agent. */
  private track(flush: Promise<void>): void {
    // One derived promise: the flush runs after each admission.
    const task: Promise<void> = flush.then(
      () => this.untrack(task),
      (error: unknown) => {
        this.fail(persistenceFailed(this.id, error))
        this.reportOutsideTurn()
        this.untrack(task)
      },
    )
    this.flushes.add(task)
  }

  private untrack(task: Promise<void>): void {
    this.flushes.delete(task)
    this.settleIdle()
  }

  beginTerminalWindow(): void {
    this.terminalWindow = true
    this.inboxState.discardSteering()
  }

  endTerminalWindow(): void {
    this.terminalWindow = false
  }

  // ── cancel, idle, maintenance ───────────────────────────────────────

  cancel(cause: AgentCancelCause, options: CancelOptions = {}): void {
    if (cause === null || typeof cause !== 'object' || !['user', 'parent', 'hook', 'disposed'].includes(cause.kind)) {
      throw new AgentError('INVALID_INPUT', "cancel() needs a cause: { kind: 'user' | 'parent' | 'hook' | 'disposed' }")
    }
    const turn = this.openTurn
    // Once the teardown began, dispose is the open turn's end (it wins the classification): a cancel from a listener
    // of its discard, before it aborts the turn, is not announced as an effective one. Nor is a cancel from a listener
    // of this cancel's own notifications (agent/cancel-requested, agent/inbox/discard): the first cancel of a turn is
    // the effective one (its cause and keepInbox stand), and a listener that cancels again cannot recurse.
    if (!turn || turn.holder.aborted || this.disposing || this.cancelling === turn) return
    this.cancelling = turn
    try {
      if (cause.kind === 'user' || cause.kind === 'parent') this.events.emit('agent/cancel-requested', cause)
      if (!options.keepInbox) {
        try {
          this.inboxState.discardAll()
        } catch (error) {
          // The log refused the discard: the agent failed and the turn is aborted already; cancel never throws for it.
          if (error !== this.failed.error) throw error
        }
      }
      turn.holder.abort(cause)
    } finally {
      this.cancelling = undefined
    }
  }

  private isIdle(): boolean {
    return !this.drain.running && !this.openTurn && this.flushes.size === 0 && !this.hasWork()
  }

  settleIdle(): void {
    // Nobody waits (the usual case: a `whenIdle()` made while the drain waited to start shares its start instead).
    if (this.idleWaiters.length === 0 || (!this.isIdle() && !this.disposing)) return
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (let i = 0; i < waiters.length; i++) waiters[i]!()
  }

  whenIdle(): Promise<void> {
    if (!this.lifecycle.reached('published') || this.isIdle()) return Promise.resolve()
    // While the drain waits to start, its start's promise settles once the agent is idle after it (`Drain`).
    return this.drain.shareStart() ?? this.idle()
  }

  /** After the drain's first call (`DrainHost`): `undefined` when idle or disposing, else a promise settled at idle. */
  idleAfterStart(): Promise<void> | undefined {
    return this.isIdle() || this.disposing ? undefined : this.idle()
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  runMaintenance<T>(task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (typeof task !== 'function') return Promise.reject(new AgentError('INVALID_INPUT', 'runMaintenance() needs a task function'))
    try {
      this.assertAdmissible()
    } catch (error) {
      return Promise.reject(error)
    }
    const deadlock = this.maintenance.deadlock(this, this.id, this.openTurn !== undefined)
    if (deadlock) return Promise.reject(deadlock)
    const done = this.maintenance.enqueue(task)
    this.kick()
    return done
  }

  // ── teardown ──────────────────────────────────────────────────────

  /**
   * Stop and drain (R-LIFE-5, first step): refuses new work, discards pending
   * items, cancels the open turn with cause `disposed` (dispose wins the turn's
   * classification), aborts maintenance, then waits for the drain, including
   * work that ignores its signal, and for pending flushes.
   */
  async stop(): Promise<void> {
    this.lifecycle.to('disposing')
    // A failed agent writes nothing more of its own: what is pending stays pending in the log, for a resume.
    if (this.lifecycle.reached('published') && !this.failed.error) {
      try {
        this.inboxState.discardAll()
      } catch (error) {
        if (error !== this.failed.error) throw error
        this.reportOutsideTurn()
      }
    }
    this.openTurn?.holder.abort({ kind: 'disposed' })
    this.maintenance.abortRunning(new AgentError('DISPOSED', `agent ${this.id} is being disposed`))
    this.maintenance.rejectQueued(() => new AgentError('DISPOSED', `agent ${this.id} is being disposed`))
    while (this.drain.running) await this.drain.stopped()
    // Injections that waited for maintenance are durable context: write them while the session is attached.
    this.injections.release(true)
    while (this.flushes.size) await Promise.all(this.flushes)
    this.settleIdle()
  }
}
