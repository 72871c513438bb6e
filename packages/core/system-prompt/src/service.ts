import Schema from 'schemastery'
import { rawEvents, untraced } from '@deepseek-ai/dsh-scope'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type {} from '@deepseek-ai/dsh-tools'
import { Context, Service, symbols } from './cordis'
import { PromptAssembler, type PromptSettings } from './assembler'
import { DEFAULT_IDENTITY, DEFAULT_PERSONA } from './defaults'
import type { AssembledContext, PromptSection, PromptVars } from './types'

declare module 'cordis' {
  interface Context {
    systemPrompt: SystemPrompt
  }
}

/**
 * `ctx.systemPrompt`: the system prompt and tool schema assembly of every
 * agent's request prefix.
 *
 * Sections registered with `section()` revert with the caller's fiber and are
 * agent-local when registered through an agent's scoped context (R-SP-2). The
 * harness identity and the deployment persona come from the config as the
 * built-in sections `identity` and `persona` (plus `environment`, rendered
 * from the `cwd`/`model`/`provider` variables); any registered section of the
 * same name shadows a built-in, globally or for one agent.
 *
 * `assembleContextFor` is deterministic (R-SP-1) and cheap when nothing
 * changed: the render is cached per agent, keyed by the section registry,
 * the config, the tools service's schema view and the variables.
 */
export class SystemPrompt extends Service {
  static readonly Config: Schema<SystemPrompt.Config> = Schema.object({
    identity: Schema.string().default(DEFAULT_IDENTITY).description('Harness identity text: the first section of every system prompt.'),
    persona: Schema.string().default(DEFAULT_PERSONA).description('Deployment persona text (tone, habits); an empty string leaves it out.'),
  })

  private readonly assembler: PromptAssembler

  constructor(ctx: Context, config: SystemPrompt.Config = {}) {
    super(ctx, 'systemPrompt')
    untraced(this)
    const logger = ctx.logger('system-prompt')
    const assembler = new PromptAssembler(rawEvents(ctx), resolve(config), (message, error) =>
      logger.warn(message, error instanceof Error ? error.message : error),
    )
    this.assembler = assembler
    assembler.tools = untracedTools(ctx)

    ctx.on('tools/change', (change) => assembler.announce({ reason: 'tools', name: change.name, agentId: change.agentId }))
    // Cordis reports a service's state more than once while it unloads; announce only when
    // the tools service actually appears or disappears.
    ctx.on('internal/service', (name) => {
      if (name !== 'tools') return
      const tools = untracedTools(ctx)
      if (!tools === !assembler.tools) return
      assembler.tools = tools
      assembler.announce({ reason: 'tools' })
    })
    ctx.on('agent/disposed', (agent) => assembler.forget(agent.id))
    // A config update (fiber.update) is applied in place instead of restarting
    // the service, which would restart every plugin that injects it (the agent
    // loop, and with it every live agent) just to change two strings.
    const removeUpdateHook = ctx.on('internal/update', (next: SystemPrompt.Config) => {
      ctx.fiber.config = next
      assembler.configure(resolve(next))
    }) as unknown as () => void
    ctx.effect(() => removeUpdateHook, 'systemPrompt: in-place config updates')
  }

  /** The effective identity and persona texts. */
  get config(): Readonly<Required<SystemPrompt.Config>> {
    return this.assembler.settings
  }

  /**
   * Registers a section for the caller's fiber (global, or local to the agent
   * whose scoped context makes the call) and returns a function that removes
   * it early. Throws `INVALID_SECTION`.
   */
  section(section: PromptSection): () => void {
    return this.assembler.section(this.ctx, section)
  }

  /**
   * Registers a section local to the agent with id `agentId` (which need not
   * exist yet: a provider can give a child its persona before creating it)
   * and returns the function that removes it. Unlike `section()` it is bound
   * to no fiber: no Cordis effect is created or revoked per registration,
   * which is most of what an agent-local section otherwise costs. The caller
   * owns its lifetime and must call the remover (at the latest when the agent
   * is gone); the service's own unload drops it anyway. Shadowing is the same
   * as for an agent-local `section()`. Throws `INVALID_SECTION`.
   */
  sectionFor(agentId: string, section: PromptSection): () => void {
    return this.assembler.sectionFor(agentId, section)
  }

  /**
   * The system text and tool schemas of one request for `agent`: sections in
   * (order, name) order, the agent's visible tools sorted by name (when the
   * tools service is mounted), then the `system-prompt/assemble` waterfall,
   * scope-filtered by the agent. Same inputs, byte-identical output. Rejects
   * with `INVALID_VARS`, `RENDER_FAILED`, `INVALID_ASSEMBLY`, or a listener's
   * own error.
   */
  async assembleContextFor(agent: Agent, vars: PromptVars): Promise<AssembledContext> {
    return this.assembler.assemble(agent, vars)
  }

  /**
   * `assembleContextFor` without a promise when there is nothing to wait
   * for: the same frozen `{ system, tools }`, returned directly when no
   * `system-prompt/assemble` listener is heard, else a promise of it. For a
   * caller on a per-step path (the agent loop) that awaits only a promise.
   * Throws (rather than rejects with) `INVALID_VARS` and `RENDER_FAILED`
   * when it returns directly.
   */
  contextFor(agent: Agent, vars: PromptVars): AssembledContext | Promise<AssembledContext> {
    return this.assembler.assemble(agent, vars)
  }
}

export namespace SystemPrompt {
  export interface Config {
    /** The harness identity, first in every system prompt. Default: `DEFAULT_IDENTITY`. */
    identity?: string
    /** The deployment persona (order 100). Default: `DEFAULT_PERSONA`; `''` leaves it out. */
    persona?: string
  }
}

/**
 * The tools service as its own object, not Cordis' tracing proxy: every
 * step's render reads its schema view, and each read through the proxy
 * looks up descriptors (the service is `untraced`, its methods need no
 * shadow context).
 */
function untracedTools(ctx: Context): Context['tools'] | undefined {
  const traced = ctx.get('tools')
  return traced && ((traced as unknown as Record<symbol, Context['tools'] | undefined>)[symbols.original] ?? traced)
}

function resolve(config: SystemPrompt.Config | undefined): PromptSettings {
  const identity = config?.identity ?? DEFAULT_IDENTITY
  const persona = config?.persona ?? DEFAULT_PERSONA
  if (typeof identity !== 'string' || typeof persona !== 'string') {
    throw new TypeError('systemPrompt config: identity and persona must be strings')
  }
  return Object.freeze({ identity, persona })
}
