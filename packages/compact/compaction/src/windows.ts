import type { LlmService, ModelInfo } from '@deepseek-ai/dsh-llm'
import { agentRoute, type AgentState } from './agent-state'

/** The window an agent's requests must fit, as the meter compares it. */
export interface Limits {
  readonly window: number
  /** Tokens kept free for the answer. */
  readonly reserved: number
  /** `window − reserved`. */
  readonly usable: number
  /** `threshold × usable`: above it a compaction runs. */
  readonly limit: number
}

/** What the window settings come from. */
export interface WindowSettings {
  readonly threshold: number
  readonly window?: number
  readonly reservedOutputTokens?: number
}

/**
 * The context windows of the agents' models (R-CMP-1): from the config, or
 * from the adapter's `resolveModel` (`contextWindow`, `maxOutputTokens`),
 * asked once per route through `ctx.llm.prepareCall`. The reserve for the
 * answer is the config's, else the agent's `maxTokens` or the model's output
 * limit, at most a quarter of the window (a model whose output limit is half
 * its window would otherwise compact at 40% of it).
 */
export class ModelWindows {
  private readonly models = new Map<string, ModelInfo | undefined>()
  private readonly resolving = new Map<string, Promise<ModelInfo | undefined>>()

  constructor(
    private readonly llm: LlmService,
    private readonly settings: WindowSettings,
    private readonly warn: (message: string) => void,
  ) {}

  /** The limits of `state`'s route when known without waiting; `null` when there is no window, `undefined` when it must be resolved. */
  cached(state: AgentState): Limits | null | undefined {
    const route = agentRoute(state)
    const configured = this.settings.window !== undefined
    if (!route) return configured ? this.limitsFrom(state, undefined) : null
    const key = `${route.provider}/${route.model}`
    if (!this.models.has(key)) return configured && this.settings.reservedOutputTokens !== undefined ? this.limitsFrom(state, undefined) : undefined
    return this.limitsFrom(state, this.models.get(key))
  }

  /** The limits of `state`'s route, resolving the model's capabilities if needed; `undefined` without a window. */
  async limits(state: AgentState): Promise<Limits | undefined> {
    const cached = this.cached(state)
    if (cached !== undefined) return cached ?? undefined
    const route = agentRoute(state)!
    const info = await this.info(route.provider, route.model)
    return this.limitsFrom(state, info) ?? undefined
  }

  /** What is known of a route's model without asking (after a resolution). */
  known(provider: string, model: string): ModelInfo | undefined {
    return this.models.get(`${provider}/${model}`)
  }

  /**
   * A model's capabilities, resolved once per route. A route with no adapter
   * yet, or whose resolution failed, is asked again next time.
   */
  info(provider: string, model: string): Promise<ModelInfo | undefined> {
    const key = `${provider}/${model}`
    if (this.models.has(key)) return Promise.resolve(this.models.get(key))
    let pending = this.resolving.get(key)
    if (!pending) {
      pending = this.llm.prepareCall({ provider, model }).then(
        (call) => {
          this.resolving.delete(key)
          if (call.hasAdapter) this.models.set(key, call.model)
          return call.model
        },
        (error: unknown) => {
          this.resolving.delete(key)
          this.warn(`cannot resolve the context window of ${key}: ${error instanceof Error ? error.message : String(error)}`)
          return undefined
        },
      )
      this.resolving.set(key, pending)
    }
    return pending
  }

  private limitsFrom(state: AgentState, info: ModelInfo | undefined): Limits | null {
    const window = this.settings.window ?? info?.contextWindow
    if (!window) return null
    const reserved = this.settings.reservedOutputTokens ?? Math.min(state.agent.options.maxTokens ?? info?.maxOutputTokens ?? 0, Math.floor(window / 4))
    const usable = Math.max(1, window - reserved)
    return { window, reserved, usable, limit: Math.floor(this.settings.threshold * usable) }
  }
}
