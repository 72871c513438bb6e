import { agentEvents, type Agent } from '@deepseek-ai/dsh-agent'
import type { LlmFailure, Message } from '@deepseek-ai/dsh-llm'
import type { SessionStore } from '@deepseek-ai/dsh-session'
import { agentRoute, routeName, type AgentState, type Pending } from './agent-state'
import { Compactor } from './compactor'
import { CompactionConfig } from './config'
import { Context, Service } from './cordis'
import { CompactionError } from './errors'
import { defaultEstimator } from './estimator'
import { TokenMeter } from './meter'
import { projectReplacement } from './projection'
import type { CompactionResult, CompactionStatus, CompactOptions, TokenEstimator } from './types'
import { ModelWindows, type Limits } from './windows'

declare module 'cordis' {
  interface Context {
    compaction: Compaction
  }
}

/**
 * `ctx.compaction` (R-CMP-1…8): keeps every agent's requests under its
 * model's context window by replacing old history with stubs (pruning) or a
 * summary, logged as `compaction/*` session events whose projector shadows
 * the replaced range.
 *
 * - After each step (`agent/post-step`) it measures the next request with a
 *   `TokenMeter`; above the threshold it marks the agent, and the compaction
 *   runs at the agent's next `agent/pre-step`: between two steps of the turn
 *   (which then goes on) or before the next turn, never inside a tool batch.
 *   The pre-step also measures the proposed batch, so a resumed session or a
 *   large prompt is caught before its request leaves.
 * - On `agent/request-error` with `CONTEXT_OVERFLOW` it compacts (with half
 *   the usual tail) and retries the step once; a second overflow fails the
 *   turn with a `CONTEXT_OVERFLOW` error that says how large the request was.
 * - `compact(agent, { instructions })` compacts on request, as maintenance
 *   (after the open turn); `status(agent)` reports the meter.
 *
 * Everything it decides is in the log: `compaction/start` (reason, range,
 * estimate and why), then `compaction/summary` or `compaction/prune` (with
 * the replacement messages), or `compaction/failed`. After a replacement it
 * emits `agent/session-start` with source `compact`. The system prompt is
 * never part of what is compacted: only derived history is.
 */
export class Compaction extends Service {
  static readonly inject = ['agents', 'sessions', 'llm']
  static readonly Config = CompactionConfig

  private readonly root: Context
  private readonly sessions: SessionStore
  private readonly threshold: number
  private readonly auto: boolean
  private readonly states = new WeakMap<Agent, AgentState>()
  private readonly estimators: TokenEstimator[] = []
  private readonly windows: ModelWindows
  private readonly compactor: Compactor
  private readonly log

  constructor(ctx: Context, config: CompactionConfig = {}) {
    super(ctx, 'compaction')
    this.root = ctx
    this.sessions = ctx.sessions
    this.log = ctx.logger('compaction')
    this.threshold = config.threshold ?? 0.8
    this.auto = config.auto ?? true
    this.windows = new ModelWindows(ctx.llm, { ...config, threshold: this.threshold }, (message) => this.log.warn(message))
    this.compactor = new Compactor(
      this.sessions,
      ctx.llm,
      this.windows,
      {
        ...config,
        tailShare: config.tailShare ?? 0.2,
        userMessagesShare: config.userMessagesShare ?? 0.1,
        conclusionShare: config.conclusionShare ?? 0.05,
        pruneTarget: config.pruneTarget ?? 0.5,
      },
      { info: (format, ...args) => this.log.info(format, ...args), warn: (error) => this.log.warn(error) },
    )

    const sessions = this.sessions
    sessions.registerType('compaction/start', { ignorable: true })
    sessions.registerType('compaction/failed', { ignorable: true })
    sessions.registerType('compaction/summary', { projector: (event) => projectReplacement(event) })
    sessions.registerType('compaction/prune', { projector: (event) => projectReplacement(event) })

    ctx.on('agent/session-start', (agent, source) => this.onSessionStart(agent, source))
    ctx.on('agent/post-step', (agent, turn, step, signal) => this.onPostStep(agent, turn, step, signal))
    ctx.on('agent/pre-step', (agent, turn, step, proposed, signal) => this.onPreStep(agent, turn, step, proposed, signal))
    const overflow = config.overflow ?? true
    ctx.on('agent/request-error', async (agent, turn, step, _error, failure, prior, signal, next) => {
      const decision = await next()
      if (decision || !overflow || failure.code !== 'CONTEXT_OVERFLOW' || signal.aborted) return decision
      return this.onOverflow(agent, turn, step, failure, prior, signal)
    })
    ctx.on('agent/disposed', (agent) => {
      const waiters = this.states.get(agent)?.pending?.waiters ?? []
      this.states.delete(agent)
      // A compact() asked for from inside a turn that never reached another step: it will never run.
      for (const waiter of waiters) waiter.reject(new CompactionError('ABORTED', 'the agent was disposed before its requested compaction could run; nothing was compacted'))
    })
  }

  /**
   * Compacts `agent`'s history now (R-CMP-8): a summary of everything before
   * the protected tail, written with `instructions` in the summarizer's
   * request. It runs as the agent's maintenance (`agent.runMaintenance`):
   * at once when the agent is idle, after the open turn otherwise, and no
   * turn opens meanwhile. Called from inside the agent's own turn (a tool),
   * it runs at the turn's next step instead.
   *
   * Resolves with the compaction's record, or `{ kind: 'skipped', code,
   * why }` when it replaced nothing although nothing failed: there is
   * nothing before the tail to compact (`NOTHING_TO_COMPACT`, nothing
   * logged), or a summary would not be, or came out not, smaller than the
   * range (`NOT_SMALLER`; when the summary was written, the log closes the
   * start with `compaction/failed { code: 'NOT_SMALLER', usage }` and `seq`
   * names it). Rejects with a `CompactionError` when the summary fails or
   * `signal` (or the agent's disposal) aborts it; nothing is shadowed then,
   * and the log says why (`compaction/failed`); also (`ABORTED`, nothing
   * logged) when it was asked for from inside a turn and the agent is
   * disposed before another step. Either way the agent goes on with its
   * history as it was.
   */
  compact(agent: Agent, options: CompactOptions = {}): Promise<CompactionResult> {
    if (!agent || typeof agent !== 'object' || typeof agent.runMaintenance !== 'function' || !agent.session) {
      return Promise.reject(new CompactionError('INVALID_ARGUMENT', 'compact() needs an agent (from ctx.agents)'))
    }
    if (options.instructions !== undefined && typeof options.instructions !== 'string') {
      return Promise.reject(new CompactionError('INVALID_ARGUMENT', 'compact(): instructions must be a string'))
    }
    const state = this.state(agent)
    const instructions = options.instructions?.trim() || undefined
    const why = `requested by compact()${instructions ? ' with instructions' : ''}`
    const task = (signal: AbortSignal) => {
      const combined = options.signal ? AbortSignal.any([signal, options.signal]) : signal
      return this.compactor.run(state, 'manual', { signal: combined, why, ...(instructions ? { instructions } : {}) })
    }
    return agent.runMaintenance(task).catch((error: unknown) => {
      if ((error as { code?: unknown } | null)?.code !== 'WOULD_DEADLOCK') throw error
      // From inside the agent's own turn: run at its next step.
      return new Promise<CompactionResult>((resolve, reject) => {
        const waiters = state.pending?.waiters ?? []
        waiters.push({ resolve, reject })
        state.pending = { reason: 'manual', why, waiters, ...(instructions ? { instructions } : {}) }
      })
    })
  }

  /** The meter's view of `agent` (R-CMP-8): estimated tokens, window, share used, and compactions so far. */
  status(agent: Agent): CompactionStatus {
    const state = this.state(agent)
    const meter = state.meter
    meter.update()
    const estimatedTokens = meter.estimate()
    const cached = this.windows.cached(state)
    if (cached === undefined) void this.windows.limits(state)
    const limits = cached ?? undefined
    return {
      estimatedTokens,
      threshold: this.threshold,
      compactions: meter.compactions,
      running: state.running,
      ...(limits ? { window: limits.window, usableWindow: limits.usable, share: estimatedTokens / limits.window, limit: limits.limit } : {}),
      ...(meter.last ? { last: meter.last } : {}),
      ...(state.pending ? { pending: state.pending.reason } : {}),
    }
  }

  /**
   * Replaces the token estimator (R-CMP-1) for every agent, until the
   * caller's fiber is disposed or the returned function is called; the
   * newest registration wins. The meters count their histories again.
   */
  setEstimator(estimator: TokenEstimator): () => void {
    if (!estimator || typeof estimator.message !== 'function' || typeof estimator.header !== 'function') {
      throw new CompactionError('INVALID_ARGUMENT', 'setEstimator() needs { message(message), header(system, tools) }')
    }
    const estimators = this.estimators
    return this.ctx.effect(() => {
      estimators.push(estimator)
      return () => {
        const index = estimators.lastIndexOf(estimator)
        if (index >= 0) estimators.splice(index, 1)
      }
    })
  }

  // ── listeners ─────────────────────────────────────────────────────

  /** On startup or resume: a `compaction/start` left open by a stopped process is closed as `INTERRUPTED`. */
  private onSessionStart(agent: Agent, source: string): void {
    if (source === 'compact') return
    const state = this.state(agent)
    state.meter.update()
    void this.windows.limits(state)
    const open = state.meter.openStart
    if (!open) return
    try {
      agent.session.append('compaction/failed', {
        code: 'INTERRUPTED',
        message: `the compaction started at seq ${open.seq} (${open.data.reason}) did not finish: the session stopped before its summary was written; nothing was shadowed`,
      })
    } catch (error) {
      this.log.warn(error)
    }
  }

  private onPostStep(agent: Agent, turn: number, step: number, signal: AbortSignal): void | Promise<void> {
    if (!this.auto || signal.aborted) return
    const state = this.state(agent)
    state.meter.update()
    const cached = this.windows.cached(state)
    if (cached !== undefined) return this.observe(state, cached ?? undefined, turn, step)
    return this.windows.limits(state).then((limits) => this.observe(state, limits, turn, step))
  }

  /** Marks `state` for a compaction at its next step when the estimate passes the limit (R-CMP-2). */
  private observe(state: AgentState, limits: Limits | undefined, turn: number, step: number): void {
    if (!limits || state.pending || turn <= state.quietTurn) return
    const estimate = state.meter.estimate()
    if (estimate <= limits.limit) return
    state.pending = { reason: 'pressure', why: `after turn ${turn} step ${step} ${pressureWhy(estimate, limits, this.threshold)}` }
  }

  private onPreStep(agent: Agent, turn: number, step: number, proposed: readonly Message[], signal: AbortSignal): void | Promise<void> {
    const state = this.state(agent)
    if (signal.aborted || state.running) return
    if (state.pending) return this.runPending(state, state.pending, turn, step, signal)
    if (!this.auto || turn <= state.quietTurn) return
    state.meter.update()
    const cached = this.windows.cached(state)
    if (cached !== undefined) {
      const found = this.preStepPressure(state, cached ?? undefined, turn, step, proposed)
      return found && this.runPending(state, found, turn, step, signal)
    }
    return this.windows.limits(state).then((limits) => {
      const found = this.preStepPressure(state, limits, turn, step, proposed)
      return found && this.runPending(state, found, turn, step, signal)
    })
  }

  /** Pressure seen at a pre-step, the proposed batch included (a resumed session, a large prompt or steering). */
  private preStepPressure(state: AgentState, limits: Limits | undefined, turn: number, step: number, proposed: readonly Message[]): Pending | undefined {
    if (!limits) return undefined
    const estimate = state.meter.estimateWith(proposed)
    if (estimate <= limits.limit) return undefined
    const batch = proposed.length ? ` with the ${proposed.length} proposed message${proposed.length === 1 ? '' : 's'}` : ''
    return { reason: 'pressure', why: `before turn ${turn} step ${step}${batch} ${pressureWhy(estimate, limits, this.threshold)}` }
  }

  /** Runs a pending compaction at a step boundary; the turn goes on whatever happens. */
  private async runPending(state: AgentState, pending: Pending, turn: number, step: number, signal: AbortSignal): Promise<void> {
    state.pending = undefined
    try {
      const result = await this.compactor.run(state, pending.reason, {
        signal,
        why: pending.why,
        turn,
        step,
        ...(pending.instructions ? { instructions: pending.instructions } : {}),
      })
      for (const waiter of pending.waiters ?? []) waiter.resolve(result)
      if (pending.reason === 'pressure') {
        const limits = this.windows.cached(state)
        state.meter.update()
        if (result.kind === 'skipped' || (limits && state.meter.estimate() > limits.limit)) {
          state.quietTurn = turn
          this.log.warn('agent %s: compaction could not bring the next request under the limit; no automatic compaction until the next turn', state.agent.id)
        }
      }
    } catch (error) {
      for (const waiter of pending.waiters ?? []) waiter.reject(error)
      if (pending.reason === 'pressure') state.quietTurn = turn
      // Logged as compaction/failed already; the step goes on with the history as it was.
      if (!signal.aborted) this.log.warn(error)
    }
  }

  /**
   * `CONTEXT_OVERFLOW` (R-CMP-3): compact and retry the step once. The second
   * consecutive overflow, a compaction that cannot shrink the history and a
   * failed summary each fail the turn with a `CONTEXT_OVERFLOW` error saying
   * how large the request was.
   */
  private async onOverflow(agent: Agent, turn: number, step: number, failure: LlmFailure, prior: readonly LlmFailure[], signal: AbortSignal) {
    const state = this.state(agent)
    state.meter.update()
    const estimate = state.meter.estimate()
    const limits = await this.windows.limits(state)
    const route = routeName(agentRoute(state))
    const size = `about ${estimate.toLocaleString('en-US')} tokens (estimated)${limits ? ` against a window of ${limits.window.toLocaleString('en-US')}` : ''}`
    const said = `The provider said: ${failure.message.replace(/[.\s]+$/, '')}`
    if (prior.some((earlier) => earlier.code === 'CONTEXT_OVERFLOW')) {
      throw new CompactionError(
        'CONTEXT_OVERFLOW',
        `the request to ${route} did not fit its context window even after compaction: it was ${size}. ${said}. Start a new session, or use a model with a larger window`,
      )
    }
    state.pending = undefined
    let result: CompactionResult
    try {
      result = await this.compactor.run(state, 'overflow', {
        signal,
        turn,
        step: step + 1,
        why: `the provider refused turn ${turn} step ${step} with CONTEXT_OVERFLOW (${failure.message}); the request was ${size}`,
      })
    } catch (error) {
      if (signal.aborted) return undefined
      throw new CompactionError(
        'CONTEXT_OVERFLOW',
        `the request to ${route} did not fit its context window (${size}) and compaction failed: ${error instanceof Error ? error.message : String(error)}. ${said}`,
        { cause: error },
      )
    }
    if (result.kind === 'skipped') {
      throw new CompactionError('CONTEXT_OVERFLOW', `the request to ${route} did not fit its context window (${size}) and compaction could not shrink it: ${result.why}. ${said}`)
    }
    return { kind: 'retry' as const }
  }

  /**
   * What dsh-agent-default-model would fill in for `agent`'s requests, when
   * that service is mounted (read optionally: this package does not depend on it).
   */
  private defaultRoute(agent: Agent): { provider: string; model: string } | undefined {
    const defaults = this.root.get('agentDefaultModel') as DefaultModelLike | undefined
    if (!defaults || typeof defaults.fill !== 'function') return undefined
    const { provider, model } = agent.options
    const filled = defaults.fill({ ...(provider ? { provider } : {}), ...(model ? { model } : {}) })
    return filled.provider && filled.model ? { provider: filled.provider, model: filled.model } : undefined
  }

  private state(agent: Agent): AgentState {
    let state = this.states.get(agent)
    const estimator = this.estimators[this.estimators.length - 1] ?? defaultEstimator
    if (!state) {
      state = {
        agent,
        meter: new TokenMeter(agent.session, estimator, (type) => this.sessions.typeInfo(type)),
        events: agentEvents(this.root, agent),
        pending: undefined,
        running: false,
        quietTurn: 0,
        defaultRoute: () => this.defaultRoute(agent),
      }
      this.states.set(agent, state)
    } else if (!state.meter.uses(estimator)) {
      state.meter.setEstimator(estimator)
    }
    return state
  }
}

export namespace Compaction {
  export type Config = CompactionConfig
}

/** The part of dsh-agent-default-model's service this package reads. */
interface DefaultModelLike {
  fill(config: { provider?: string; model?: string }): { provider?: string; model?: string }
}

function pressureWhy(estimate: number, limits: Limits, threshold: number): string {
  return (
    `the next request is estimated at ${estimate.toLocaleString('en-US')} tokens, over the limit of ${limits.limit.toLocaleString('en-US')} ` +
    `(${Math.round(threshold * 100)}% of the usable window: ${limits.window.toLocaleString('en-US')} − ${limits.reserved.toLocaleString('en-US')} reserved for the answer)`
  )
}
