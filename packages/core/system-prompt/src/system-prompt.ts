import Schema from 'schemastery'
import { deepFreeze, type ToolSchema } from '@deepseek-ai/dsh-llm'
import { ScopedRegistry, emitContained, subjectFilter, type ScopedChange, type SubjectFilter } from '@deepseek-ai/dsh-scope'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type {} from '@deepseek-ai/dsh-tools'
import { Context, Service } from './cordis'
import { DEFAULT_IDENTITY, DEFAULT_PERSONA, builtinSections } from './defaults'
import { SystemPromptError } from './errors'
import { checkSection, checkVars, renderSections, varsKey } from './render'
import type { AssembledContext, PromptSection, PromptVars, SystemPromptChange } from './types'

declare module 'cordis' {
  interface Context {
    systemPrompt: SystemPrompt
  }
}

interface RegisteredSection {
  readonly section: PromptSection
  readonly serial: number
}

/** One agent's last render and what it depended on. */
interface RenderCache {
  readonly sections: number
  readonly config: number
  readonly tools: readonly ToolSchema[]
  /** The variables object as the caller passed it: the loop may pass the same one every step. */
  readonly input: PromptVars
  /** The checked copy handed to listeners. */
  readonly vars: PromptVars
  readonly varsKey: string
  readonly result: AssembledContext
}

const noTools: readonly ToolSchema[] = Object.freeze([])

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

  /** The service's own context (service methods see the caller's as `this.ctx`). */
  private readonly home: Context
  private readonly registry: ScopedRegistry<RegisteredSection>
  private readonly renders = new Map<string, RenderCache>()
  private readonly filters = new Map<string, SubjectFilter>()
  private builtins: readonly PromptSection[]
  private configVersion = 0
  private serial = 0
  private settings: Required<SystemPrompt.Config>

  constructor(ctx: Context, config: SystemPrompt.Config = {}) {
    super(ctx, 'systemPrompt')
    this.home = ctx
    this.settings = resolve(config)
    this.builtins = builtinSections(this.settings.identity, this.settings.persona)
    this.registry = new ScopedRegistry<RegisteredSection>({ onChange: (change) => this.sectionChanged(change) })

    ctx.on('tools/change', (change) => this.announce({ reason: 'tools', name: change.name, agentId: change.agentId }))
    ctx.on('agent/disposed', (agent) => {
      this.renders.delete(agent.id)
      this.filters.delete(agent.id)
    })
    // Cordis reports a service's state more than once while it unloads; announce only when
    // the tools service actually appears or disappears.
    let hasTools = !!ctx.get('tools')
    ctx.on('internal/service', (name) => {
      if (name !== 'tools' || hasTools === !!ctx.get('tools')) return
      hasTools = !hasTools
      this.announce({ reason: 'tools' })
    })
    // A config update (fiber.update) is applied in place instead of restarting
    // the service, which would restart every plugin that injects it (the agent
    // loop, and with it every live agent) just to change two strings.
    const removeUpdateHook = ctx.on('internal/update', (config: SystemPrompt.Config) => {
      ctx.fiber.config = config
      this.configure(resolve(config))
    }) as unknown as () => void
    ctx.effect(() => removeUpdateHook, 'systemPrompt: in-place config updates')
  }

  /** The effective identity and persona texts. */
  get config(): Readonly<Required<SystemPrompt.Config>> {
    return this.settings
  }

  /**
   * Registers a section for the caller's fiber (global, or local to the agent
   * whose scoped context makes the call) and returns a function that removes
   * it early. Throws `INVALID_SECTION`.
   */
  section(section: PromptSection): () => void {
    const checked = checkSection(section)
    const entry: RegisteredSection = Object.freeze({ section: checked, serial: ++this.serial })
    return this.registry.register(this.ctx, checked.name, entry)
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
    const base = this.render(agent, vars)
    const result = await this.home.waterfall(this.filterOf(agent.id), 'system-prompt/assemble', agent, base.vars, async () => base.result)
    return result === base.result ? result : checkAssembly(result)
  }

  /** Applies a new identity/persona; emits `system-prompt/change` when either changed. */
  private configure(settings: Required<SystemPrompt.Config>): void {
    if (settings.identity === this.settings.identity && settings.persona === this.settings.persona) return
    this.settings = settings
    this.builtins = builtinSections(settings.identity, settings.persona)
    this.configVersion++
    this.announce({ reason: 'config' })
  }

  private render(agent: Agent, input: PromptVars): RenderCache {
    const subject = agent.id
    const tools = this.home.get('tools')?.schemas(agent) ?? noTools
    const cached = this.renders.get(subject)
    const fresh =
      cached !== undefined &&
      cached.sections === this.registry.version &&
      cached.config === this.configVersion &&
      cached.tools === tools
    if (fresh && cached.input === input) return cached
    const vars = checkVars(input)
    const key = varsKey(vars)
    if (fresh && cached.varsKey === key) return cached
    const sections = this.builtins.filter((section) => !this.registry.has(section.name, subject))
    for (const entry of this.registry.entries(subject)) sections.push(entry.value.section)
    const result: AssembledContext = Object.freeze({ system: renderSections(sections, vars), tools })
    const render: RenderCache = { sections: this.registry.version, config: this.configVersion, tools, input, vars, varsKey: key, result }
    this.renders.set(subject, render)
    return render
  }

  private filterOf(subject: string): SubjectFilter {
    let filter = this.filters.get(subject)
    if (!filter) this.filters.set(subject, (filter = subjectFilter(subject)))
    return filter
  }

  /** A section change is announced unless a newer registration of the same name and scope already shadowed it. */
  private sectionChanged(change: ScopedChange<RegisteredSection>): void {
    const { entry } = change
    if (change.kind === 'remove') {
      const now = this.registry.entry(entry.key, entry.subject)
      if (now && now.subject === entry.subject && now.value.serial > entry.value.serial) return
    }
    this.announce({ reason: 'section', name: entry.key, agentId: entry.subject as Agent['id'] | undefined })
  }

  private announce(change: { reason: SystemPromptChange['reason']; name?: string; agentId?: Agent['id'] }): void {
    const payload: SystemPromptChange = Object.freeze({
      reason: change.reason,
      ...(change.agentId === undefined ? {} : { agentId: change.agentId }),
      ...(change.name === undefined ? {} : { name: change.name }),
    })
    const filter = change.agentId === undefined ? null : this.filterOf(change.agentId)
    emitContained(this.home, filter, 'system-prompt/change', [payload], (error) =>
      this.home.logger('system-prompt').warn('a system-prompt/change listener failed: %s', error instanceof Error ? error.message : error),
    )
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

function resolve(config: SystemPrompt.Config | undefined): Required<SystemPrompt.Config> {
  const identity = config?.identity ?? DEFAULT_IDENTITY
  const persona = config?.persona ?? DEFAULT_PERSONA
  if (typeof identity !== 'string' || typeof persona !== 'string') {
    throw new TypeError('systemPrompt config: identity and persona must be strings')
  }
  return Object.freeze({ identity, persona })
}

/** Copies a listener's `{ system, tools }` (and nothing else), checked and frozen. Throws `INVALID_ASSEMBLY`. */
function checkAssembly(value: unknown): AssembledContext {
  if (value === null || typeof value !== 'object') {
    throw new SystemPromptError('INVALID_ASSEMBLY', 'a system-prompt/assemble listener returned no { system, tools } object')
  }
  const { system, tools } = value as { system?: unknown; tools?: unknown }
  if (typeof system !== 'string') {
    throw new SystemPromptError('INVALID_ASSEMBLY', 'a system-prompt/assemble listener returned a non-string system text')
  }
  if (!Array.isArray(tools)) {
    throw new SystemPromptError('INVALID_ASSEMBLY', 'a system-prompt/assemble listener returned tools that are not an array')
  }
  for (const [index, tool] of tools.entries()) {
    const t = tool as Partial<ToolSchema> | null
    if (!t || typeof t.name !== 'string' || typeof t.description !== 'string' || !t.parameters || typeof t.parameters !== 'object') {
      throw new SystemPromptError('INVALID_ASSEMBLY', `a system-prompt/assemble listener returned an invalid tool schema at tools[${index}]`)
    }
  }
  return Object.freeze({ system, tools: deepFreeze([...(tools as ToolSchema[])]) })
}
