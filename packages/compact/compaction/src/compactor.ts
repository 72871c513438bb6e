import { createUserMessage, type ContentBlock, type LlmService, type Message, type ModelInfo, type PreparedCall } from '@deepseek-ai/dsh-llm'
import type { Session, SessionEventMap, SessionStore } from '@deepseek-ai/dsh-session'
import { agentRoute, type AgentState, type RunOptions } from './agent-state'
import { CompactionError } from './errors'
import type { TokenMeter } from './meter'
import { planRange, prunableResults, type CompactionPlan } from './plan'
import { blocksText, callNames, keepUserMessages, lastConclusion, stubResult, summaryMessage, truncateStart, type TextCounter } from './replacement'
import { SUMMARY_SYSTEM_PROMPT, summarize } from './summarizer'
import type { CompactionReason, CompactionResult, PrunedResult } from './types'
import type { ModelWindows } from './windows'

/** What a compaction is configured with (shares of the window; see `CompactionConfig`). */
export interface CompactorSettings {
  readonly tailShare: number
  readonly userMessagesShare: number
  readonly conclusionShare: number
  readonly pruneTarget: number
  readonly pruneMinTokens?: number
  readonly summaryMaxTokens?: number
  readonly summaryProvider?: string
  readonly summaryModel?: string
}

/** Where a compaction writes what it did and why. */
export interface CompactionLog {
  info(format: string, ...args: unknown[]): void
  warn(error: unknown): void
}

const MIN_SUMMARY_TOKENS = 256
const MAX_SUMMARY_TOKENS = 4_096
/** The share of the summarizer's window its conversation text may take after the prompt and the answer (the estimate is rough). */
const SUMMARY_INPUT_SAFETY = 0.9

/** A prune's replacement: the messages from the first to the last pruned result, those results as stubs. */
interface PruneReplacement {
  readonly from: number
  readonly to: number
  readonly messages: Message[]
  readonly pruned: PrunedResult[]
  /** Tokens saved (uncalibrated). */
  readonly saved: number
}

/**
 * Runs compactions (R-CMP-2, R-CMP-4, R-CMP-5, R-CMP-7): plans the range at a
 * step boundary, logs `compaction/start`, then prunes (model-free) or
 * summarizes, and logs the replacement, after which the agent hears
 * `agent/session-start('compact')`. A failure or a cancel logs
 * `compaction/failed` and shadows nothing.
 */
export class Compactor {
  constructor(
    private readonly sessions: SessionStore,
    private readonly llm: LlmService,
    private readonly windows: ModelWindows,
    private readonly settings: CompactorSettings,
    private readonly log: CompactionLog,
  ) {}

  /** One compaction of `state`'s agent; at most one runs per agent (a second one is skipped). */
  async run(state: AgentState, reason: CompactionReason, options: RunOptions): Promise<CompactionResult> {
    if (state.running) return { kind: 'skipped', reason, code: 'RUNNING', why: 'a compaction of this agent is already running' }
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
    const limits = await this.windows.limits(state)
    if (options.signal.aborted) throw new CompactionError('ABORTED', 'the compaction was aborted before it started; nothing was compacted')
    meter.update()
    const estimate = meter.estimate()
    // Without a known window (an overflow on a model that reports none), the request that failed stands in for it.
    const window = limits?.window ?? Math.max(estimate, 1)
    const usable = limits?.usable ?? window
    const calibration = meter.calibration
    const tailShare = this.settings.tailShare * (reason === 'overflow' ? 0.5 : 1)
    const plan = planRange(meter.entries, meter.boundaries, session.events.length, (window * tailShare) / calibration)
    if (meter.entries.length === 0) {
      return { kind: 'skipped', reason, code: 'NOTHING_TO_COMPACT', why: 'nothing to compact: the history is empty' }
    }
    if (!plan || plan.fresh === 0) {
      const tail = plan ? plan.tailTokens : meter.historyTokens
      return {
        kind: 'skipped',
        reason,
        code: 'NOTHING_TO_COMPACT',
        why: `nothing to compact: the history after the last summary (about ${format(Math.ceil(tail * calibration))} tokens) is all within the protected tail (${format(Math.floor(window * tailShare))} tokens)`,
      }
    }

    const countText = textCounter(meter)
    // What a summary keeps verbatim: the user's messages (budgeted), the todo list and the last conclusion.
    const conclusion = lastConclusion(meter.entries, plan.count)
    const kept = {
      messages: plan.count,
      tokens: Math.ceil(calibration * plan.rangeTokens),
      userMessages: keepUserMessages(meter.entries, plan.count, (window * this.settings.userMessagesShare) / calibration, countText),
      ...(meter.todos && meter.todos.length ? { todos: meter.todos } : {}),
      ...(conclusion ? { conclusion: truncateStart(conclusion, (window * this.settings.conclusionShare) / calibration, countText) } : {}),
    }

    const pruneMin = this.pruneMinTokens(window)
    const prunable = reason === 'manual' ? [] : prunableResults(meter.entries, plan.count, pruneMin)
    let prune = prunable.length ? pruneReplacement(meter, plan, prunable) : undefined
    if (prune && meter.estimateAfter(-prune.saved) > this.settings.pruneTarget * usable) prune = undefined
    if (!prune) {
      // What a summary keeps verbatim is already as large as the range: a summary could only make it larger.
      const floor = meter.count(summaryMessage({ ...kept, summary: '' }))
      if (floor >= plan.rangeTokens) {
        return {
          kind: 'skipped',
          reason,
          code: 'NOT_SMALLER',
          why: `nothing to gain: the ${format(Math.ceil(calibration * plan.rangeTokens))} tokens before the protected tail are no more than what a summary keeps of them verbatim (about ${format(Math.ceil(calibration * floor))} tokens)`,
        }
      }
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
      // Durable before the model call: a crash during the summary leaves a start that the resume reports.
      await this.sessions.flush(session).catch((error: unknown) => this.log.warn(error))
      if (options.signal.aborted) throw new CompactionError('ABORTED', 'the compaction was aborted; nothing was compacted', { cause: options.signal.reason })
      let seq: number
      let tokensAfter: number
      if (prune) {
        tokensAfter = meter.estimateAfter(-prune.saved)
        seq = appendReplacement(session, 'compaction/prune', {
          from: prune.from,
          to: prune.to,
          at: session.events.length,
          messages: prune.messages,
          pruned: prune.pruned,
          tokensBefore: estimate,
          tokensAfter,
        })
      } else {
        const summary = await this.summarize(state, plan, window, calibration, countText, options)
        const message = summaryMessage({ ...kept, summary: summary.summary })
        const replacementTokens = meter.count(message)
        if (replacementTokens >= plan.rangeTokens) {
          // Nothing failed: the history is already about as small as a summary can make it. The log
          // closes the start (with what the summary cost); the caller gets a skip, not an error.
          const why = `nothing to gain: the summary (about ${format(Math.ceil(calibration * replacementTokens))} tokens with what it keeps verbatim) would not be smaller than the ${format(Math.ceil(calibration * plan.rangeTokens))} tokens it replaces; nothing was compacted`
          const failed = appendFailed(session, { code: 'NOT_SMALLER', message: why, usage: summary.usage, calls: summary.calls, route: summary.route }, this.log)
          if (reason === 'manual') await this.sessions.flush(session).catch((error: unknown) => this.log.warn(error))
          this.log.info('agent %s: compaction (%s) wrote nothing: %s', agent.id, reason, why)
          return { kind: 'skipped', reason, code: 'NOT_SMALLER', why, ...(failed !== undefined ? { seq: failed } : {}) }
        }
        tokensAfter = meter.estimateAfter(replacementTokens - plan.rangeTokens)
        seq = appendReplacement(session, 'compaction/summary', {
          from: plan.from,
          to: plan.to,
          at: session.events.length,
          summary: summary.summary,
          messages: [message],
          userMessages: kept.userMessages,
          usage: summary.usage,
          calls: summary.calls,
          route: summary.route,
          tokensBefore: estimate,
          tokensAfter,
        })
      }
      const kind = prune ? 'prune' : 'summary'
      if (reason === 'manual') await this.sessions.flush(session).catch((error: unknown) => this.log.warn(error))
      this.log.info('agent %s: compacted by %s (%s): about %d → %d tokens', agent.id, kind, reason, estimate, tokensAfter)
      state.events.emit('agent/session-start', 'compact')
      return { kind, reason, seq, from: plan.from, to: plan.to, tokensBefore: estimate, tokensAfter }
    } catch (error) {
      const failure =
        error instanceof CompactionError ? error : new CompactionError('SUMMARY_FAILED', `the compaction failed: ${describe(error)}; nothing was compacted`, { cause: error })
      appendFailed(session, { code: failure.code, message: failure.message }, this.log)
      throw failure
    }
  }

  private pruneMinTokens(window: number): number {
    return this.settings.pruneMinTokens ?? Math.max(100, Math.round(window * 0.02))
  }

  /** The summary of the plan's range, by the summary route (the agent's own by default). */
  private async summarize(state: AgentState, plan: CompactionPlan, window: number, calibration: number, countText: TextCounter, options: RunOptions) {
    const own = agentRoute(state)
    const configured = this.settings.summaryProvider !== undefined || this.settings.summaryModel !== undefined
    const provider = this.settings.summaryProvider ?? own?.provider
    const model = this.settings.summaryModel ?? own?.model
    if (!provider || !model) {
      throw new CompactionError('SUMMARY_FAILED', 'no model to write the summary: the agent has made no request yet and names no provider/model; set summaryProvider and summaryModel')
    }
    const info: ModelInfo | undefined = configured ? await this.windows.info(provider, model) : this.windows.known(provider, model)
    const summaryWindow = configured ? (info?.contextWindow ?? window) : window
    let summaryTokens = this.settings.summaryMaxTokens ?? Math.min(MAX_SUMMARY_TOKENS, Math.max(MIN_SUMMARY_TOKENS, Math.floor(window / 10)))
    if (info?.maxOutputTokens) summaryTokens = Math.min(summaryTokens, info.maxOutputTokens)
    let call: PreparedCall
    try {
      call = await this.llm.prepareCall({ provider, model, maxTokens: summaryTokens }, options.signal)
    } catch (error) {
      if (options.signal.aborted) throw new CompactionError('ABORTED', 'the compaction was aborted; nothing was compacted', { cause: error })
      throw new CompactionError('SUMMARY_FAILED', `could not prepare the summary call to ${provider}/${model}: ${describe(error)}; nothing was compacted`, { cause: error })
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
      pruneMinTokens: this.pruneMinTokens(window),
      countText,
      signal: options.signal,
      ...(options.instructions ? { instructions: options.instructions } : {}),
    })
    return { ...outcome, route: { provider: call.config.provider, model: call.config.model } }
  }
}

/** The messages positioned from the first to the last pruned result, those results replaced by stubs. */
function pruneReplacement(meter: TokenMeter, plan: CompactionPlan, indices: readonly number[]): PruneReplacement {
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
    const stub = stubResult(entry.message, entry.tokens, blocksText(block.content).length, names)
    messages.push(stub.message)
    pruned.push(stub.pruned)
    saved += entry.tokens - meter.count(stub.message)
  }
  return { from, to, messages, pruned, saved }
}

/** Appends a replacement event; a refusal is a `CompactionError` (the event shadows nothing then). */
function appendReplacement<K extends 'compaction/summary' | 'compaction/prune'>(session: Session, type: K, data: SessionEventMap[K]): number {
  try {
    return session.append(type, data).seq
  } catch (error) {
    throw new CompactionError('APPEND_REFUSED', `the session log refused ${type}: ${describe(error)}; nothing was compacted`, { cause: error })
  }
}

/** Appends the `compaction/failed` that closes a start; returns its seq, or undefined when the log refused it (logged). */
function appendFailed(session: Session, data: SessionEventMap['compaction/failed'], log: CompactionLog): number | undefined {
  try {
    return session.append('compaction/failed', data).seq
  } catch (refused) {
    log.warn(refused)
    return undefined
  }
}

/** Counts a text's tokens with the meter's estimator (as a one-text message, without the message overhead). */
function textCounter(meter: TokenMeter): TextCounter {
  const overhead = meter.count(createUserMessage(''))
  return (text) => Math.max(0, meter.count(createUserMessage(text)) - overhead)
}

function format(n: number): string {
  return n.toLocaleString('en-US')
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
