import Schema from 'schemastery'
import type { ToolSchema } from '@deepseek-ai/dsh-llm'
import { ScopedRegistry, emitContained, scopeOf, subjectFilter, type ScopedChange, type ScopedEntry, type SubjectFilter } from '@deepseek-ai/dsh-scope'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { Context, Service } from './cordis'
import { parseArguments } from './arguments'
import { schemaOf } from './definition'
import { executeCall, type PipelineHost } from './pipeline'
import type { ToolCall, ToolCallResult, ToolChange, ToolDefinition, ToolExecuteOptions, ToolGuard } from './types'

declare module 'cordis' {
  interface Context {
    tools: ToolRegistry
  }
}

/** One registration: the definition, its frozen wire schema, and its registration order. */
interface RegisteredTool {
  readonly definition: ToolDefinition
  readonly schema: ToolSchema
  readonly serial: number
}

interface GuardEntry {
  readonly guard: ToolGuard
  readonly subject: string | undefined
}

/**
 * `ctx.tools`: the scoped tool registry and the guarded execution pipeline.
 *
 * Registrations revert with the caller's fiber and are agent-local when made
 * through an agent's scoped context (`agent.ctx.tools.register(...)`): that
 * agent sees them over global tools of the same name, other agents never see
 * them. The newest registration of a name in a scope wins; disposing it
 * uncovers the previous one, so a reloaded plugin leaves exactly its new tool.
 */
export class ToolRegistry extends Service {
  static readonly Config: Schema<ToolRegistry.Config> = Schema.object({
    defaultTimeoutMs: Schema.natural()
      .default(0)
      .description('Timeout in milliseconds for tools that set no timeoutMs of their own; 0 means none.'),
  })

  /** The registry's own context (service methods see the caller's as `this.ctx`). */
  private readonly home: Context
  private readonly registry: ScopedRegistry<RegisteredTool>
  private readonly guardEntries: GuardEntry[] = []
  private readonly schemaViews = new Map<string, { source: readonly ScopedEntry<RegisteredTool>[]; schemas: readonly ToolSchema[] }>()
  private readonly filters = new Map<string, SubjectFilter>()
  private readonly host: PipelineHost
  private serial = 0

  constructor(ctx: Context, config: ToolRegistry.Config = {}) {
    super(ctx, 'tools')
    this.home = ctx
    this.registry = new ScopedRegistry<RegisteredTool>({ onChange: (change) => this.announce(change) })
    const logger = ctx.logger('tools')
    const self = this
    this.host = {
      home: ctx,
      defaultTimeoutMs: config.defaultTimeoutMs ?? 0,
      filter: (agent) => self.filterOf(agent.id),
      definition: (name, agent) => self.registry.get(name, agent.id)?.definition,
      guards: (agent) => self.guardsOf(agent.id),
      reportListenerError: (event, error) => logger.warn(`a ${event} listener failed: %s`, error instanceof Error ? error.message : error),
    }
    ctx.on('agent/disposed', (agent) => {
      this.filters.delete(agent.id)
      this.schemaViews.delete(agent.id)
    })
  }

  /**
   * Registers a tool for the caller's fiber (global, or local to the agent
   * whose scoped context makes the call) and returns a function that removes
   * it early. Throws `INVALID_DEFINITION` for a definition that cannot be sent
   * to a model or run.
   */
  register<Args>(definition: ToolDefinition<Args>): () => void {
    const schema = schemaOf(definition as ToolDefinition)
    const entry: RegisteredTool = Object.freeze({ definition: definition as ToolDefinition, schema, serial: ++this.serial })
    return this.registry.register(this.ctx, schema.name, entry)
  }

  /**
   * Adds a guard for the caller's fiber: global, or local to the agent whose
   * scoped context makes the call. Guards run in registration order after
   * `tools/pre-execute` and approval; each can only deny.
   */
  guard(guard: ToolGuard): () => void {
    if (typeof guard !== 'function') throw new TypeError('tools.guard() needs a function')
    const entry: GuardEntry = Object.freeze({ guard, subject: scopeOf(this.ctx) })
    const dispose = this.ctx.effect(() => {
      this.guardEntries.push(entry)
      return () => {
        const index = this.guardEntries.indexOf(entry)
        if (index >= 0) this.guardEntries.splice(index, 1)
      }
    }, 'tools.guard()')
    return () => void dispose()
  }

  /**
   * The schemas of the tools `agent` sees (global ones without an agent),
   * sorted by name. The array and its schemas are frozen, and the same array
   * is returned until a registration changes, so the request prefix built
   * from it is byte-stable across plugin reloads (R-SP-1).
   */
  schemas(agent?: Agent): readonly ToolSchema[] {
    const subject = agent?.id
    const source = this.registry.entries(subject)
    const key = subject ?? ''
    const cached = this.schemaViews.get(key)
    if (cached && cached.source === source) return cached.schemas
    const schemas = Object.freeze(source.map((entry) => entry.value.schema))
    this.schemaViews.set(key, { source, schemas })
    return schemas
  }

  /** The definition `agent` would run under `name` (its own over a global one), if any. */
  definition(name: string, agent?: Agent): ToolDefinition | undefined {
    return this.registry.get(name, agent?.id)?.definition
  }

  /**
   * Whether the call may overlap other concurrency-safe calls. False when the
   * tool is unknown, its arguments do not parse or validate, it has no
   * `isConcurrencySafe`, or that returns anything but `true` or throws. The
   * loop asks just before starting each call.
   */
  isConcurrencySafe(call: Pick<ToolCall, 'name' | 'arguments'>, agent?: Agent): boolean {
    const definition = this.definition(call.name, agent)
    if (!definition || typeof definition.isConcurrencySafe !== 'function') return false
    try {
      return definition.isConcurrencySafe(parseArguments(definition, call.arguments)) === true
    } catch {
      return false
    }
  }

  /**
   * Runs one call through the pipeline (R-TOOL-1) on behalf of `agent` and
   * resolves its result. It never rejects: every failure is an error result
   * with a code (R-TOOL-2). See `ToolCallResult`.
   */
  execute(call: ToolCall, options: ToolExecuteOptions): Promise<ToolCallResult> {
    return executeCall(this.host, call, options)
  }

  /** Increments whenever a registration changes; a cheap cache key for derived data. */
  get version(): number {
    return this.registry.version
  }

  private filterOf(subject: string): SubjectFilter {
    let filter = this.filters.get(subject)
    if (!filter) this.filters.set(subject, (filter = subjectFilter(subject)))
    return filter
  }

  private guardsOf(subject: string): ToolGuard[] {
    const guards: ToolGuard[] = []
    for (const entry of this.guardEntries) {
      if (entry.subject === undefined || entry.subject === subject) guards.push(entry.guard)
    }
    return guards
  }

  /**
   * Emits `tools/change` when a change is visible to someone: every add is;
   * a removal is not when a newer registration of the same name and scope
   * already shadowed the removed one.
   */
  private announce(change: ScopedChange<RegisteredTool>): void {
    const { entry } = change
    if (change.kind === 'remove') {
      const now = this.registry.entry(entry.key, entry.subject)
      if (now && now.subject === entry.subject && now.value.serial > entry.value.serial) return
    }
    const payload: ToolChange = Object.freeze({
      kind: change.kind,
      name: entry.key,
      ...(entry.subject === undefined ? {} : { agentId: entry.subject as Agent['id'] }),
    })
    const filter = entry.subject === undefined ? null : this.filterOf(entry.subject)
    emitContained(this.home, filter, 'tools/change', [payload], (error) => this.host.reportListenerError('tools/change', error))
  }
}

export namespace ToolRegistry {
  export interface Config {
    /** Timeout for tools that set no `timeoutMs`; 0 (the default) means none. */
    defaultTimeoutMs?: number
  }
}
