import { deepFreeze, type ToolSchema } from '@deepseek-ai/dsh-llm'
import {
  ContainedEmitter,
  ScopedRegistry,
  heard,
  subjectFilter,
  type RawEvents,
  type ScopedChange,
  type SubjectFilter,
} from '@deepseek-ai/dsh-scope'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { ToolRegistry } from '@deepseek-ai/dsh-tools'
import type { Context } from './cordis'
import { builtinSections } from './defaults'
import { SystemPromptError } from './errors'
import { checkSection, checkVars, renderSections, varsKey } from './render'
import type { AssembledContext, PromptSection, PromptVars, SystemPromptChange } from './types'

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

/** The identity and persona texts, resolved. */
export interface PromptSettings {
  readonly identity: string
  readonly persona: string
}

const noTools: readonly ToolSchema[] = Object.freeze([])

/**
 * The state and logic behind `ctx.systemPrompt`, as a plain object: the
 * service delegates each method here with one traced property access, because
 * Cordis traces every `this.x` inside a service method and builds an `Error`
 * whenever a context reaches a service or a mixin such as `ctx.waterfall`. On a
 * per-step path those costs dwarfed the render itself. See
 * .agents/notes/implemented/architecture/2026-11-30-untraced-service-cores.md.
 */
export class PromptAssembler {
  private readonly registry: ScopedRegistry<RegisteredSection>
  private readonly renders = new Map<string, RenderCache>()
  private readonly filters = new Map<string, SubjectFilter>()
  private readonly emitter: ContainedEmitter
  private builtins: readonly PromptSection[]
  private configVersion = 0
  private serial = 0
  /** The tools service while it is mounted, refreshed by the service on `internal/service`. */
  tools: ToolRegistry | undefined

  constructor(
    private readonly events: RawEvents,
    private current: PromptSettings,
    private readonly warn: (message: string, error: unknown) => void,
  ) {
    this.builtins = builtinSections(current.identity, current.persona)
    this.emitter = new ContainedEmitter(events)
    this.registry = new ScopedRegistry<RegisteredSection>({ onChange: (change) => this.sectionChanged(change) })
  }

  get settings(): PromptSettings {
    return this.current
  }

  section(ctx: Context, section: PromptSection): () => void {
    const checked = checkSection(section)
    const entry: RegisteredSection = Object.freeze({ section: checked, serial: ++this.serial })
    return this.registry.register(ctx, checked.name, entry)
  }

  sectionFor(subject: string, section: PromptSection): () => void {
    if (typeof subject !== 'string' || subject === '') throw new SystemPromptError('INVALID_SECTION', 'sectionFor() needs the id of the agent the section is for')
    const checked = checkSection(section)
    const remove = this.registry.add(checked.name, Object.freeze({ section: checked, serial: ++this.serial }), subject)
    return () => {
      remove()
      // The removal's announcement made a filter for the subject; when the agent is already gone
      // (the usual case), `forget` on its disposal has run, so drop what the announcement left.
      this.forget(subject)
    }
  }

  /**
   * The assembled context: the cached render itself when no
   * `system-prompt/assemble` listener is heard (no promise), else a promise
   * of the waterfall's checked result. Throws a render's errors.
   */
  assemble(agent: Agent, vars: PromptVars): AssembledContext | Promise<AssembledContext> {
    const base = this.render(agent, vars)
    if (!heard(this.events, 'system-prompt/assemble')) return base.result
    return this.assembleHeard(agent, base)
  }

  private async assembleHeard(agent: Agent, base: RenderCache): Promise<AssembledContext> {
    const result = await this.events.waterfall(this.filterOf(agent.id), 'system-prompt/assemble', agent, base.vars, async () => base.result)
    return result === base.result ? result : checkAssembly(result)
  }

  /** Applies new identity/persona texts; announces a change when either differs. */
  configure(settings: PromptSettings): void {
    if (settings.identity === this.current.identity && settings.persona === this.current.persona) return
    this.current = settings
    this.builtins = builtinSections(settings.identity, settings.persona)
    this.configVersion++
    this.announce({ reason: 'config' })
  }

  /** Drops what was cached for an agent that is gone. */
  forget(subject: string): void {
    this.renders.delete(subject)
    this.filters.delete(subject)
  }

  announce(change: { reason: SystemPromptChange['reason']; name?: string; agentId?: Agent['id'] }): void {
    const payload: SystemPromptChange = Object.freeze({
      reason: change.reason,
      ...(change.agentId === undefined ? {} : { agentId: change.agentId }),
      ...(change.name === undefined ? {} : { name: change.name }),
    })
    const filter = change.agentId === undefined ? null : this.filterOf(change.agentId)
    this.emitter.emit(filter, 'system-prompt/change', [payload], (error) =>
      this.warn('a system-prompt/change listener failed: %s', error),
    )
  }

  private render(agent: Agent, input: PromptVars): RenderCache {
    const subject = agent.id
    const tools = this.tools?.schemas(agent) ?? noTools
    const cached = this.renders.get(subject)
    const fresh =
      cached !== undefined && cached.sections === this.registry.version && cached.config === this.configVersion && cached.tools === tools
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
