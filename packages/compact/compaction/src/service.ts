import { agentEvents, type Agent, type AgentEventEmitter } from '@deepseek-ai/dsh-agent'
import { createUserMessage, type ContentBlock, type LlmService, type Message, type ModelInfo, type PreparedCall } from '@deepseek-ai/dsh-llm'
import type { SessionStore, SessionEventMap } from '@deepseek-ai/dsh-session'
import { CompactionConfig } from './config'
import { Context, Service } from './cordis'
import { CompactionError } from './errors'
import { defaultEstimator } from './estimator'
import { TokenMeter } from './meter'
import { planRange, prunableResults, type CompactionPlan } from './plan'
import { projectReplacement } from './projection'
import { blocksText, callNames, keepUserMessages, lastConclusion, stubResult, summaryMessage, truncateStart, type TextCounter } from './replacement'
import { SUMMARY_SYSTEM_PROMPT, summarize } from './summarizer'
import type { CompactionReason, CompactionResult, CompactionStatus, CompactOptions, PrunedResult, TokenEstimator } from './types'

declare module 'cordis' {
  interface Context {
    compaction: Compaction
  }
}

/** The window an agent's requests must fit, as the meter compares it. */
interface Limits {
  readonly window: number
  readonly reserved: number
  readonly usable: number
  /** `threshold × usable`: above it a compaction runs. */
  readonly limit: number
}

/** A compaction waiting for the agent's next step. */
interface Pending {
  readonly reason: CompactionReason
  readonly why: string
  readonly instructions?: string
  /** Callers of `compact()` (from inside the agent's own turn) waiting for it. */
  readonly waiters?: Array<{ resolve(result: CompactionResult): void; reject(error: unknown): void }>
}

/** What the plugin keeps per agent. */
interface AgentState {
  readonly agent: Agent
  readonly meter: TokenMeter
  readonly events: AgentEventEmitter
  pending: Pending | undefined
  running: boolean
  /** No automatic compaction until a turn after this one (one failed or could not get under the limit). */
  quietTurn: number
}

/** How one compaction runs. */
interface RunOptions {
  readonly signal: AbortSignal
  readonly why: string
  readonly instructions?: string
  readonly turn?: number
  readonly step?: number
}

const MIN_SUMMARY_TOKENS = 256
const MAX_SUMMARY_TOKENS = 4_096
/** The share of the summarizer's window its conversation text may take after the prompt and the answer (the estimate is rough). */
const SUMMARY_INPUT_SAFETY = 0.9

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
  private readonly llm: LlmService
  private readonly config: Required<Pick<CompactionConfig, 'threshold' | 'tailShare' | 'userMessagesShare' | 'conclusionShare' | 'pruneTarget' | 'auto' | 'overflow'>> & CompactionConfig
  private readonly states = new WeakMap<Agent, AgentState>()
  /** Model capabilities by route (`provider/model`), once resolved. */
  private readonly models = new Map<string, ModelInfo | undefined>()
  private readonly resolving = new Map<string, Promise<ModelInfo | undefined>>()
  private readonly estimators: TokenEstimator[] = []
  private readonly log

  constructor(ctx: Context, config: CompactionConfig = {}) {
    super(ctx, 'compaction')
    this.root = ctx
    this.sessions = ctx.sessions
    this.llm = ctx.llm
    this.log = ctx.logger('compaction')
    this.config = {
      ...config,
      threshold: config.threshold ?? 0.8,
      tailShare: config.tailShare ?? 0.2,
      userMessagesShare: config.userMessagesShare ?? 0.1,
      conclusionShare: config.conclusionShare ?? 0.05,
      pruneTarget: config.pruneTarget ?? 0.5,
      auto: config.auto ?? true,
      overflow: config.overflow ?? true,
    }

    const sessions = this.sessions
    sessions.registerType('compaction/start', { ignorable: true })
    sessions.registerType('compaction/failed', { ignorable: true })
    sessions.registerType('compaction/summary', { projector: (event) => projectReplacement(event) })
    sessions.registerType('compaction/prune', { projector: (event) => projectReplacement(event) })

    ctx.on('agent/session-start', (agent, source) => this.onSessionStart(agent, source))
    ctx.on('agent/post-step', (agent, turn, step, signal) => this.onPostStep(agent, turn, step, signal))
    ctx.on('agent/pre-step', (agent, turn, step, proposed, signal) => this.onPreStep(agent, turn, step, proposed, signal))
    ctx.on('agent/request-error', async (agent, turn, step, _error, failure, prior, signal, next) => {
      const decision = await next()
      if (decision || !this.config.overflow || failure.code !== 'CONTEXT_OVERFLOW' || signal.aborted) return decision
      return this.onOverflow(agent, turn, step, failure.message, prior.some((earlier) => earlier.code === 'CONTEXT_OVERFLOW'), signal)
    })
    ctx.on('agent/disposed', (agent) => void this.states.delete(agent))
  }

  /**
   * Compacts `agent`'s history now (R-CMP-8): a summary of everything before
   * the protected tail, written with `instructions` in the summarizer's
   * request. It runs as the agent's maintenance (`agent.runMaintenance`):
   * at once when the agent is idle, after the open turn otherwise, and no
   * turn opens meanwhile. Called from inside the agent's own turn (a tool),
   * it runs at the turn's next step instead.
   *
   * Resolves with the compaction's record, or `{ kind: 'skipped', why }`
   * when there is nothing before the tail to compact. Rejects with a
   * `CompactionError` when the summary fails or `signal` (or the agent's
   * disposal) aborts it; nothing is shadowed then, and the log says why
   * (`compaction/failed`).
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
      return this.run(state, 'manual', { signal: combined, why, ...(instructions ? { instructions } : {}) })
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
    state.meter.update()
    const estimatedTokens = state.meter.estimate()
    const cached = this.cachedLimits(state)
    if (cached === undefined) void this.limits(state)
    const limits = cached ?? undefined
    const meter = state.meter
    return {
      estimatedTokens,
      threshold: this.config.threshold,
      compactions: meter.compactions,
      running: state.running,
      ...(limits
        ? { window: limits.window, usableWindow: limits.usable, share: estimatedTokens / limits.window, limit: limits.limit }
        : {}),
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

  private onSessionStart(agent: Agent, source: string): void {
    if (source === 'compact') return
    const state = this.state(agent)
    state.meter.update()
    void this.limits(state)
    const open = state.meter.openStart
    if (!open) return
    // The process stopped during a compaction: say so in the log, so it explains itself.
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
    if (!this.config.auto || signal.aborted) return
    const state = this.state(agent)
    state.meter.update()
    const cached = this.cachedLimits(state)
    if (cached !== undefined) return this.observe(state, cached ?? undefined, turn, step)
    return this.limits(state).then((limits) => this.observe(state, limits, turn, step))
  }

  /** Marks `state` for a compaction at its next step when the estimate passes the limit (R-CMP-2). */
  private observe(state: AgentState, limits: Limits | undefined, turn: number, step: number): void {
    if (!limits || state.pending || turn <= state.quietTurn) return
    const estimate = state.meter.estimate()
    if (estimate <= limits.limit) return
    state.pending = { reason: 'pressure', why: `after turn ${turn} step ${step} ${pressureWhy(estimate, limits, this.config.threshold)}` }
  }

  private onPreStep(agent: Agent, turn: number, step: number, proposed: readonly Message[], signal: AbortSignal): void | Promise<void> {
    const state = this.state(agent)
    if (signal.aborted || state.running) return
    let pending = state.pending
    if (!pending) {
      if (!this.config.auto || turn <= state.quietTurn) return
      state.meter.update()
      const cached = this.cachedLimits(state)
      if (cached === undefined) {
        return this.limits(state).then((limits) => {
          const found = this.preStepPressure(state, limits, turn, step, proposed)
          if (found) return this.runPending(state, found, turn, step, signal)
        })
      }
      pending = this.preStepPressure(state, cached ?? undefined, turn, step, proposed)
      if (!pending) return
    }
    return this.runPending(state, pending, turn, step, signal)
  }

  private preStepPressure(state: AgentState, limits: Limits | undefined, turn: number, step: number, proposed: readonly Message[]): Pending | undefined {
    if (!limits) return undefined
    const estimate = state.meter.estimateWith(proposed)
    if (estimate <= limits.limit) return undefined
    const batch = proposed.length ? ` with the ${proposed.length} proposed message${proposed.length === 1 ? '' : 's'}` : ''
    return { reason: 'pressure', why: `before turn ${turn} step ${step}${batch} ${pressureWhy(estimate, limits, this.config.threshold)}` }
  }

  /** Runs a pending compaction at a step boundary; the turn goes on whatever happens. */
  private async runPending(state: AgentState, pending: Pending, turn: number, step: number, signal: AbortSignal): Promise<void> {
    state.pending = undefined
    try {
      const result = await this.run(state, pending.reason, {
        signal,
        why: pending.why,
        turn,
        step,
        ...(pending.instructions ? { instructions: pending.instructions } : {}),
      })
      for (const waiter of pending.waiters ?? []) waiter.resolve(result)
      if (pending.reason === 'pressure') {
        const limits = this.cachedLimits(state)
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

  private async onOverflow(agent: Agent, turn: number, step: number, said: string, again: boolean, signal: AbortSignal) {
    const state = this.state(agent)
    state.meter.update()
    const estimate = state.meter.estimate()
    const limits = await this.limits(state)
    const route = this.routeOf(state)
    const size = `about ${estimate.toLocaleString('en-US')} tokens (estimated)${limits ? ` against a window of ${limits.window.toLocaleString('en-US')}` : ''}`
    if (again) {
      throw new CompactionError(
        'CONTEXT_OVERFLOW',
        `the request to ${route ?? 'the model'} did not fit its context window even after compaction: it was ${size}. The provider said: ${said}. Start a new session, or use a model with a larger window`,
      )
    }
    state.pending = undefined
    let result: CompactionResult
    try {
      result = await this.run(state, 'overflow', {
        signal,
        turn,
        step: step + 1,
        why: `the provider refused turn ${turn} step ${step} with CONTEXT_OVERFLOW (${said}); the request was ${size}`,
      })
    } catch (error) {
      if (signal.aborted) return undefined
      throw new CompactionError(
        'CONTEXT_OVERFLOW',
        `the request to ${route ?? 'the model'} did not fit its context window (${size}) and compaction failed: ${error instanceof Error ? error.message : String(error)}. The provider said: ${said}`,
        { cause: error },
      )
    }
    if (result.kind === 'skipped') {
      throw new CompactionError(
        'CONTEXT_OVERFLOW',
        `the request to ${route ?? 'the model'} did not fit its context window (${size}) and compaction could not shrink it: ${result.why}. The provider said: ${said}`,
      )
    }
    return { kind: 'retry' as const }
  }

  // ── the compaction ────────────────────────────────────────────────

  /**
   * One compaction, at a step boundary or as maintenance: plans the range,
   * logs `compaction/start`, then either prunes (model-free) or summarizes,
   * and logs the replacement; `agent/session-start('compact')` follows. On
   * failure logs `compaction/failed` and rethrows; nothing is shadowed.
   */
  private async run(state: AgentState, reason: CompactionReason, options: RunOptions): Promise<CompactionResult> {
    if (state.running) return { kind: 'skipped', reason, why: 'a compaction of this agent is already running' }
    state.running = true
    try {
      return await this.runExclusive(state, reason, options)
    } finally {
      state.running = false
    }
  }

  private async runExclusive(state: AgentState, reason: CompactionReason, options: RunOptions): Promise<CompactionResult> {
    const { agent, meter } = state
    const session = agent.session
    meter.update()
    const limits = await this.limits(state)
    if (options.signal.aborted) throw new CompactionError('ABORTED', 'the compaction was aborted before it started; nothing was compacted')
    meter.update()
    const estimate = meter.estimate()
    // Without a known window (an overflow on a model that reports none), the request that failed stands in for it.
    const window = limits?.window ?? Math.max(estimate, 1)
    const usable = limits?.usable ?? window
    const calibration = meter.calibration
    const tailShare = this.config.tailShare * (reason === 'overflow' ? 0.5 : 1)
    const plan = planRange(meter.entries, meter.boundaries, session.events.length, (window * tailShare) / calibration)
    if (!plan || plan.fresh === 0) {
      const tail = plan ? plan.tailTokens : meter.historyTokens
      return {
        kind: 'skipped',
        reason,
        why: `nothing to compact: the history after the last summary (about ${Math.ceil(tail * calibration).toLocaleString('en-US')} tokens) is all within the protected tail (${Math.floor(window * tailShare).toLocaleString('en-US')} tokens)`,
      }
    }

    const countText = this.textCounter(meter)
    const pruneMin = this.config.pruneMinTokens ?? Math.max(100, Math.round(window * 0.02))
    const prunable = reason === 'manual' ? [] : prunableResults(meter.entries, plan.count, pruneMin)
    let prune: { from: number; to: number; messages: Message[]; pruned: PrunedResult[]; saved: number } | undefined
    if (prunable.length) {
      prune = this.pruneReplacement(meter, plan, prunable)
      if (estimate - Math.floor(calibration * prune.saved) > this.config.pruneTarget * usable) prune = undefined
    }

    const start: SessionEventMap['compaction/start'] = {
      reason,
      from: plan.from,
      to: plan.to,
      estimatedTokens: estimate,
      ...(limits ? { window: limits.window } : {}),
      why: options.why,
      ...(options.turn !== undefined ? { turn: options.turn } : {}),
      ...(options.step !== undefined ? { step: options.step } : {}),
      ...(options.instructions ? { instructions: options.instructions } : {}),
    }
    try {
      session.append('compaction/start', start)
    } catch (error) {
      throw new CompactionError('APPEND_REFUSED', `the session log refused compaction/start: ${describe(error)}; nothing was compacted`, { cause: error })
    }
    this.log.info('agent %s: compaction (%s) of [%d, %d): %s', agent.id, reason, plan.from, plan.to, options.why)

    try {
      // Durable before the model call: a crash during the summary leaves a start the resume reports.
      await this.sessions.flush(session).catch((error: unknown) => this.log.warn(error))
      if (options.signal.aborted) throw new CompactionError('ABORTED', 'the compaction was aborted; nothing was compacted', { cause: options.signal.reason })
      let seq: number
      let kind: 'summary' | 'prune'
      let tokensAfter: number
      if (prune) {
        kind = 'prune'
        tokensAfter = Math.ceil(calibration * (meter.headerTokens + meter.historyTokens - prune.saved))
        seq = this.append(session, 'compaction/prune', {
          from: prune.from,
          to: prune.to,
          at: session.events.length,
          messages: prune.messages,
          pruned: prune.pruned,
          tokensBefore: estimate,
          tokensAfter,
        })
      } else {
        kind = 'summary'
        const summary = await this.summarize(state, plan, window, calibration, countText, options)
        const keptBudget = (window * this.config.userMessagesShare) / calibration
        const userMessages = keepUserMessages(meter.entries, plan.count, keptBudget, countText)
        const conclusion = lastConclusion(meter.entries, plan.count)
        const message = summaryMessage({
          summary: summary.summary,
          messages: plan.count,
          tokens: Math.ceil(calibration * plan.rangeTokens),
          userMessages,
          ...(meter.todos && meter.todos.length ? { todos: meter.todos } : {}),
          ...(conclusion ? { conclusion: truncateStart(conclusion, (window * this.config.conclusionShare) / calibration, countText) } : {}),
        })
        tokensAfter = Math.ceil(calibration * (meter.headerTokens + meter.historyTokens - plan.rangeTokens + meter.count(message)))
        seq = this.append(session, 'compaction/summary', {
          from: plan.from,
          to: plan.to,
          at: session.events.length,
          summary: summary.summary,
          messages: [message],
          userMessages,
          usage: summary.usage,
          calls: summary.calls,
          route: summary.route,
          tokensBefore: estimate,
          tokensAfter,
        })
      }
      if (reason === 'manual') await this.sessions.flush(session).catch((error: unknown) => this.log.warn(error))
      this.log.info('agent %s: compacted by %s (%s): about %d → %d tokens', agent.id, kind, reason, estimate, tokensAfter)
      state.events.emit('agent/session-start', 'compact')
      return { kind, reason, seq, from: plan.from, to: plan.to, tokensBefore: estimate, tokensAfter }
    } catch (error) {
      const failure =
        error instanceof CompactionError
          ? error
          : new CompactionError('SUMMARY_FAILED', `the compaction failed: ${describe(error)}; nothing was compacted`, { cause: error })
      try {
        session.append('compaction/failed', { code: failure.code, message: failure.message })
      } catch (refused) {
        this.log.warn(refused)
      }
      throw failure
    }
  }

  /** Appends a replacement event; a refusal is a `CompactionError` (the event shadows nothing then). */
  private append<K extends 'compaction/summary' | 'compaction/prune'>(session: Agent['session'], type: K, data: SessionEventMap[K]): number {
    try {
      return session.append(type, data).seq
    } catch (error) {
      throw new CompactionError('APPEND_REFUSED', `the session log refused ${type}: ${describe(error)}; nothing was compacted`, { cause: error })
    }
  }

  /** The prune replacement: the messages positioned from the first to the last pruned result, those results as stubs. */
  private pruneReplacement(meter: TokenMeter, plan: CompactionPlan, indices: readonly number[]) {
    const entries = meter.entries
    const names = callNames(entries, plan.count)
    const from = entries[indices[0]!]!.pos
    const to = entries[indices[indices.length - 1]!]!.pos + 1
    const chosen = new Set(indices)
    const messages: Message[] = []
    const pruned: PrunedResult[] = []
    let saved = 0
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!
      if (entry.pos < from) continue
      if (entry.pos >= to) break
      if (!chosen.has(i)) {
        messages.push(entry.message)
        continue
      }
      const block = entry.message.content[0] as Extract<ContentBlock, { type: 'tool-result' }>
      const characters = blocksText(block.content).length
      const stub = stubResult(entry.message, entry.tokens, characters, names)
      messages.push(stub.message)
      pruned.push(stub.pruned)
      saved += entry.tokens - meter.count(stub.message)
    }
    return { from, to, messages, pruned, saved }
  }

  /** The summary of the plan's range, by the summary route. */
  private async summarize(state: AgentState, plan: CompactionPlan, window: number, calibration: number, countText: TextCounter, options: RunOptions) {
    const route = this.summaryRoute(state)
    if (!route) throw new CompactionError('SUMMARY_FAILED', 'no model to write the summary: the agent has made no request yet and has no provider/model; set summaryProvider/summaryModel')
    let info: ModelInfo | undefined
    if (this.config.summaryProvider || this.config.summaryModel) info = await this.modelInfo(route.provider, route.model)
    else info = this.models.get(`${route.provider}/${route.model}`)
    const summaryWindow = this.config.summaryProvider || this.config.summaryModel ? (info?.contextWindow ?? window) : window
    let summaryTokens = this.config.summaryMaxTokens ?? Math.min(MAX_SUMMARY_TOKENS, Math.max(MIN_SUMMARY_TOKENS, Math.floor(window / 10)))
    if (info?.maxOutputTokens) summaryTokens = Math.min(summaryTokens, info.maxOutputTokens)
    let call: PreparedCall
    try {
      call = await this.llm.prepareCall({ provider: route.provider, model: route.model, maxTokens: summaryTokens }, options.signal)
    } catch (error) {
      if (options.signal.aborted) throw new CompactionError('ABORTED', 'the compaction was aborted; nothing was compacted', { cause: error })
      throw new CompactionError('SUMMARY_FAILED', `could not prepare the summary call to ${route.provider}/${route.model}: ${describe(error)}; nothing was compacted`, { cause: error })
    }
    const overhead = countText(SUMMARY_SYSTEM_PROMPT) + countText(options.instructions ?? '') + 200
    const inputBudget = Math.max(256, Math.floor(((summaryWindow - summaryTokens) * SUMMARY_INPUT_SAFETY) / calibration) - overhead)
    const outcome = await summarize({
      entries: state.meter.entries,
      count: plan.count,
      names: callNames(state.meter.entries, plan.count),
      call,
      inputBudget,
      summaryTokens: Math.ceil(summaryTokens / calibration),
      pruneMinTokens: this.config.pruneMinTokens ?? Math.max(100, Math.round(window * 0.02)),
      countText,
      signal: options.signal,
      ...(options.instructions ? { instructions: options.instructions } : {}),
    })
    return { ...outcome, route: { provider: call.config.provider, model: call.config.model } }
  }

  // ── state, routes and windows ─────────────────────────────────────

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
      }
      this.states.set(agent, state)
    } else if (!state.meter.uses(estimator)) {
      state.meter.setEstimator(estimator)
    }
    return state
  }

  /** Counts a text's tokens with the meter's estimator (as a one-text message, without the message overhead). */
  private textCounter(meter: TokenMeter): TextCounter {
    const overhead = meter.count(createUserMessage(''))
    return (text) => Math.max(0, meter.count(createUserMessage(text)) - overhead)
  }

  /** The route of the agent's requests: the last logged header, else its options. */
  private routeOf(state: AgentState): string | undefined {
    const route = state.meter.route
    if (route) return `${route.provider}/${route.model}`
    const { provider, model } = state.agent.options
    return provider && model ? `${provider}/${model}` : undefined
  }

  private summaryRoute(state: AgentState): { provider: string; model: string } | undefined {
    const own = state.meter.route ?? (state.agent.options.provider && state.agent.options.model ? { provider: state.agent.options.provider, model: state.agent.options.model } : undefined)
    const provider = this.config.summaryProvider ?? own?.provider
    const model = this.config.summaryModel ?? own?.model
    return provider && model ? { provider, model } : undefined
  }

  /** The limits for `state`'s route when they are known without waiting; `undefined` when they must be resolved. */
  private cachedLimits(state: AgentState): Limits | null | undefined {
    const route = this.routeOf(state)
    if (route === undefined) return this.config.window ? this.limitsFrom(state, undefined) : null
    if (!this.models.has(route)) return this.config.window && this.config.reservedOutputTokens !== undefined ? this.limitsFrom(state, undefined) : undefined
    return this.limitsFrom(state, this.models.get(route))
  }

  /** The limits for `state`'s route, resolving its model's capabilities if needed; `undefined` without a window. */
  private async limits(state: AgentState): Promise<Limits | undefined> {
    const cached = this.cachedLimits(state)
    if (cached !== undefined) return cached ?? undefined
    const route = this.routeOf(state)!
    const slash = route.indexOf('/')
    const info = await this.modelInfo(route.slice(0, slash), route.slice(slash + 1))
    return this.limitsFrom(state, info) ?? undefined
  }

  private limitsFrom(state: AgentState, info: ModelInfo | undefined): Limits | null {
    const window = this.config.window ?? info?.contextWindow
    if (!window) return null
    const reserved = this.config.reservedOutputTokens ?? Math.min(state.agent.options.maxTokens ?? info?.maxOutputTokens ?? 0, Math.floor(window / 4))
    const usable = Math.max(1, window - reserved)
    return { window, reserved, usable, limit: Math.floor(this.config.threshold * usable) }
  }

  /**
   * A model's capabilities (`resolveModel` through `ctx.llm.prepareCall`),
   * resolved once per route. A route with no adapter yet, or whose
   * resolution failed, is asked again next time.
   */
  private modelInfo(provider: string, model: string): Promise<ModelInfo | undefined> {
    const route = `${provider}/${model}`
    if (this.models.has(route)) return Promise.resolve(this.models.get(route))
    let pending = this.resolving.get(route)
    if (!pending) {
      pending = this.llm.prepareCall({ provider, model }).then(
        (call) => {
          this.resolving.delete(route)
          if (call.hasAdapter) this.models.set(route, call.model)
          return call.model
        },
        (error: unknown) => {
          this.resolving.delete(route)
          this.log.warn('cannot resolve the context window of %s: %s', route, describe(error))
          return undefined
        },
      )
      this.resolving.set(route, pending)
    }
    return pending
  }
}

export namespace Compaction {
  export type Config = CompactionConfig
}

function pressureWhy(estimate: number, limits: Limits, threshold: number): string {
  return (
    `the next request is estimated at ${estimate.toLocaleString('en-US')} tokens, over the limit of ${limits.limit.toLocaleString('en-US')} ` +
    `(${Math.round(threshold * 100)}% of the usable window: ${limits.window.toLocaleString('en-US')} − ${limits.reserved.toLocaleString('en-US')} reserved for the answer)`
  )
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
