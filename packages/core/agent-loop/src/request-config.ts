import { AgentError, type Agent, type AgentOptions } from '@deepseek-ai/dsh-agent'
import type { LlmCallConfig, PreparedCall, ToolSchema } from '@deepseek-ai/dsh-llm'
import type { Session, SessionEventMap } from '@deepseek-ai/dsh-session'
import type { PromptVars } from '@deepseek-ai/dsh-system-prompt'
import type { Checkpoints } from './checkpoints'
import type { Context } from './cordis'
import { pluginBug } from './decision-checks'
import type { CheckedLogWriter } from './failure'

/** The last request header written to the log, folded: its fields, with the tools kept as serialized. */
export interface HeaderState extends Omit<SessionEventMap['request/header'], 'tools' | 'reason'> {
  tools: readonly unknown[]
  toolsJson: string
}

/** The source of a step's assistant messages: the route that answered. */
export type ModelSource = { readonly kind: 'model'; readonly provider: string; readonly model: string }

/** A call config whose route is complete: what a request is prepared from. */
export type RoutedConfig = LlmCallConfig & { provider: string; model: string }

/**
 * One agent's request configuration and header logging (R-LOOP-2, 3, 6).
 *
 * A step's config starts from the agent's options (`base`), goes through the
 * `agent/request` waterfall (`request`; listeners may fill or change the
 * route and the sampling settings between steps, never the messages), is
 * checked and completed (`settle`: a malformed return is `INVALID_DECISION`,
 * the restored reasoning effort is applied, a missing route is `NO_MODEL`),
 * and is prepared by the adapter (`prepareCall`: its reasoning effort is
 * validated and its defaults filled, under the turn's signal). The effective
 * config of the prepared call is then compared with the last
 * `request/header` of the log (`logHeader`), and a new header is written
 * before dispatch whenever the config, the system text or the tools differ,
 * so the log explains every request.
 *
 * The step (`step-prepare.ts`) calls these in that order and checks its
 * cancellation between them; each returns the waterfall's or the adapter's
 * value as it is (no promise of its own), so the split costs the hot path
 * nothing.
 */
export class RequestConfig {
  private vars: PromptVars | undefined
  private source: ModelSource | undefined
  private header: HeaderState | undefined
  private headerReason: 'initial' | 'resume' | 'change'
  /** The effort to restore on this instance's first request, when its route matches the log's. */
  private restorable: { provider: string; model: string; effort: string } | undefined
  /** `base()` frozen once: the config of every step nobody's `agent/request` changes (the options are frozen). */
  private readonly ownBase: Readonly<LlmCallConfig>
  /** What is wrong with `ownBase` (checked once, when the agent is built), or `undefined`. */
  private readonly ownBaseProblem: string | undefined

  /**
   * Reads the log's last header: a resumed log, or a fork's seed, has one.
   * `resumed` says which reason a changed header gives (`resume` after a
   * load, `change` after a seed).
   */
  constructor(
    private readonly checkpoints: Checkpoints,
    private readonly llm: Context['llm'],
    private readonly log: CheckedLogWriter,
    private readonly session: Session,
    private readonly options: Readonly<AgentOptions>,
    resumed: boolean,
  ) {
    this.ownBase = Object.freeze(this.base())
    this.ownBaseProblem = configProblem(this.ownBase)
    // The variables of the agent's own route, made now: a step on that route finds them ready.
    const { provider, model } = this.ownBase
    if (this.ownBaseProblem === undefined && provider !== undefined && model !== undefined) this.promptVars(provider, model)
    this.header = lastHeader(session)
    this.headerReason = this.header ? (resumed ? 'resume' : 'change') : 'initial'
    // R-LOOP-6 for a resumed log and a fork's seed alike (a fresh log has no header).
    if (this.header?.reasoningEffort) {
      this.restorable = { provider: this.header.provider, model: this.header.model, effort: this.header.reasoningEffort }
    }
  }

  /** The per-agent part of each step's call config. */
  base(): LlmCallConfig {
    const { provider, model, reasoningEffort, maxTokens } = this.options
    const config: LlmCallConfig = {}
    if (provider !== undefined) config.provider = provider
    if (model !== undefined) config.model = model
    if (reasoningEffort !== undefined) config.reasoningEffort = reasoningEffort
    if (maxTokens !== undefined) config.maxTokens = maxTokens
    return config
  }

  /**
   * The `agent/request` waterfall over `base()`: the listeners' config,
   * unchecked (awaited by the caller). With no listener, the agent's own
   * frozen base config (which `settle` checks once).
   */
  request(agent: Agent, turn: number, step: number, signal: AbortSignal): LlmCallConfig | Promise<LlmCallConfig> {
    if (!this.checkpoints.heard('agent/request')) return this.ownBase
    return this.heardRequest(agent, turn, step, signal)
  }

  /** `agent/request` dispatched (its closure made here: no context per call of `request`). */
  private heardRequest(agent: Agent, turn: number, step: number, signal: AbortSignal): LlmCallConfig | Promise<LlmCallConfig> {
    const base = this.base()
    return this.checkpoints.waterfall('agent/request', [agent, turn, step, base, signal], () => base)
  }

  /**
   * Checks what the waterfall returned (`INVALID_DECISION`), restores the
   * logged reasoning effort when the route allows it, and requires a route
   * (`NO_MODEL`).
   */
  settle(requested: unknown): RoutedConfig {
    // The agent's own frozen base was checked when the agent was built (its options cannot change).
    if (requested !== this.ownBase) checkConfig(requested)
    else if (this.ownBaseProblem !== undefined) throw pluginBug('agent/request', this.ownBaseProblem)
    const config = this.restoreEffort(requested as LlmCallConfig)
    if (!config.provider || !config.model) {
      throw new AgentError(
        'NO_MODEL',
        'no provider/model for this request: pass agentOptions.provider and .model, or mount @deepseek-ai/dsh-agent-default-model with a default',
      )
    }
    return config as RoutedConfig
  }

  /**
   * The system prompt variables of a step. The object is reused while the
   * route does not change, so the prompt service's cache hits by identity.
   */
  promptVars(provider: string, model: string): PromptVars {
    const vars = this.vars
    if (vars && vars.provider === provider && vars.model === model) return vars
    const cwd = this.session.meta.cwd
    return (this.vars = Object.freeze(cwd === undefined ? { provider, model } : { provider, model, cwd }))
  }

  /**
   * The source of the assistant messages of a step on this route: one frozen
   * object reused while the route does not change (a step's answer is
   * deep-frozen with its source; a frozen one is not walked again).
   */
  modelSource(provider: string, model: string): ModelSource {
    const source = this.source
    if (source && source.provider === provider && source.model === model) return source
    return (this.source = Object.freeze({ kind: 'model', provider, model }))
  }

  /**
   * `ctx.llm.prepareCallNow`: binds the route to one adapter registration for
   * the whole step and fills the adapter's defaults. The prepared call itself
   * when the adapter answers at once, a promise (awaited by the caller) when
   * its `resolveModel` does not; a failure found before any wait is thrown.
   */
  prepareCall(config: RoutedConfig, signal: AbortSignal): PreparedCall | Promise<PreparedCall> {
    return this.llm.prepareCallNow(config, signal)
  }

  /**
   * Logs `request/header` when the effective config, system text or tools
   * differ from the last header. A refused append fails the agent (the
   * writer's rule) and the header state is left as it was.
   */
  logHeader(config: Readonly<RoutedConfig>, system: string, tools: readonly ToolSchema[]): void {
    const last = this.header
    // The system prompt service keeps its tool list identity-stable while nothing changes,
    // so the serialization is only paid when the list object is new.
    const toolsJson = last && last.tools === tools ? last.toolsJson : JSON.stringify(tools)
    if (
      last &&
      last.toolsJson === toolsJson &&
      last.provider === config.provider &&
      last.model === config.model &&
      last.reasoningEffort === config.reasoningEffort &&
      last.maxTokens === config.maxTokens &&
      last.temperature === config.temperature &&
      last.system === system
    ) {
      last.tools = tools
      return
    }
    this.log.append(
      'request/header',
      {
        provider: config.provider,
        model: config.model,
        ...(config.reasoningEffort !== undefined ? { reasoningEffort: config.reasoningEffort } : {}),
        ...(config.maxTokens !== undefined ? { maxTokens: config.maxTokens } : {}),
        ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
        system,
        tools: tools as ToolSchema[],
        reason: this.headerReason,
      },
      'checked',
    )
    this.headerReason = 'change'
    this.header = {
      provider: config.provider,
      model: config.model,
      reasoningEffort: config.reasoningEffort,
      maxTokens: config.maxTokens,
      temperature: config.temperature,
      system,
      tools,
      toolsJson,
    }
  }

  /**
   * R-LOOP-6: a resumed or forked instance restores the logged reasoning effort when its
   * route equals the logged route, and keeps it while the route stays the same
   * (a request that names an effort uses its own). The first request on
   * another route drops it for good, with any opaque state of the old model.
   */
  private restoreEffort(config: LlmCallConfig): LlmCallConfig {
    const restorable = this.restorable
    if (!restorable) return config
    if (config.provider !== restorable.provider || config.model !== restorable.model) {
      this.restorable = undefined
      return config
    }
    return config.reasoningEffort !== undefined ? config : { ...config, reasoningEffort: restorable.effort }
  }
}

function checkConfig(config: unknown): asserts config is LlmCallConfig {
  const problem = configProblem(config)
  if (problem !== undefined) throw pluginBug('agent/request', problem)
}

/** What is wrong with a call config returned by `agent/request`, or `undefined`. */
function configProblem(config: unknown): string | undefined {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return 'must return a call config object'
  const c = config as Record<string, unknown>
  for (const key of ['provider', 'model', 'reasoningEffort'] as const) {
    if (c[key] !== undefined && typeof c[key] !== 'string') return `${key} must be a string`
  }
  for (const key of ['maxTokens', 'temperature'] as const) {
    if (c[key] !== undefined && (typeof c[key] !== 'number' || !Number.isFinite(c[key]))) return `${key} must be a finite number`
  }
  return undefined
}

/** The last `request/header` of a log, folded for comparison (searched from the end). */
function lastHeader(session: Session): HeaderState | undefined {
  const events = session.events
  for (let i = events.length - 1; i >= 0; i--) {
    // The type first: the chunks passed on the way are not rebuilt.
    if (session.typeAt(i) !== 'request/header') continue
    const event = events[i]!
    if (event.type !== 'request/header') continue
    const data = event.data
    return {
      provider: data.provider,
      model: data.model,
      reasoningEffort: data.reasoningEffort,
      maxTokens: data.maxTokens,
      temperature: data.temperature,
      system: data.system,
      tools: data.tools,
      toolsJson: JSON.stringify(data.tools),
    }
  }
  return undefined
}
