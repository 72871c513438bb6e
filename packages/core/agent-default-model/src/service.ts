import '@deepseek-ai/dsh-agent'
import Schema from 'schemastery'
import type { LlmCallConfig } from '@deepseek-ai/dsh-llm'
import { Context, Service } from './cordis'
import { normalize, type ModelSelection } from './selection'

declare module 'cordis' {
  interface Context {
    agentDefaultModel: AgentDefaultModel
  }
  interface Events {
    /**
     * The default selection changed through `select()` (or was cleared).
     * @mode emit
     */
    'agent-default-model/change'(selection: ModelSelection | undefined): void
  }
}

/**
 * `ctx.agentDefaultModel`: the default `{ provider, model }` every entry point
 * shares (config, CLI flags, `select()` at run time).
 *
 * It fills the call config of agents that name no model: an `agent/request`
 * listener completes a missing provider/model pair from the selection. It
 * fills only what is missing, and only when what is present agrees with the
 * selection: a config naming another provider without a model is left alone
 * (the turn then fails with `NO_MODEL`), because pairing one provider with
 * another provider's model would send a request no adapter can serve.
 */
export class AgentDefaultModel extends Service {
  static readonly Config: Schema<AgentDefaultModel.Config> = Schema.object({
    provider: Schema.string().description('Default provider, e.g. "deepseek" or "scripted".'),
    model: Schema.string().description('Default model of that provider, e.g. "deepseek-chat".'),
  })

  private selection: ModelSelection | undefined

  constructor(ctx: Context, config: AgentDefaultModel.Config = {}) {
    super(ctx, 'agentDefaultModel')
    this.selection = normalize(config)
    ctx.on('agent/request', async (_agent, _turn, _step, _config, _signal, next) => this.fill(await next()))
  }

  /** The current default, if any. */
  current(): ModelSelection | undefined {
    return this.selection
  }

  /**
   * Sets (or, with `undefined`, clears) the default. Both fields are required:
   * a half selection would be ambiguous. Emits `agent-default-model/change`.
   */
  select(selection: ModelSelection | undefined): void {
    if (selection !== undefined) {
      if (typeof selection?.provider !== 'string' || !selection.provider || typeof selection.model !== 'string' || !selection.model) {
        throw Object.assign(new TypeError('select() needs a non-empty provider and model'), { code: 'INVALID_OPTIONS' })
      }
      selection = { provider: selection.provider, model: selection.model }
    }
    this.selection = selection
    this.ctx.emit('agent-default-model/change', selection)
  }

  /** `config` with a missing provider/model completed from the selection, when they agree. */
  fill(config: LlmCallConfig): LlmCallConfig {
    const selection = this.selection
    if (!selection || (config.provider && config.model)) return config
    if (config.provider && config.provider !== selection.provider) return config
    if (config.model && !config.provider && config.model !== selection.model) return config
    return { ...config, provider: selection.provider, model: config.model ?? selection.model }
  }
}

export namespace AgentDefaultModel {
  export interface Config {
    provider?: string
    model?: string
  }
}
