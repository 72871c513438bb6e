import type { ToolSchema } from '@deepseek-ai/dsh-llm'
import {
  ContainedEmitter,
  ScopedRegistry,
  scopeOf,
  subjectFilter,
  type RawEvents,
  type ScopedChange,
  type ScopedEntry,
  type SubjectFilter,
} from '@deepseek-ai/dsh-scope'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Context } from './cordis'
import { parseArguments } from './arguments'
import { schemaOf } from './definition'
import { StagedCall, executeCall, neverAborted, planCall, type ToolCallPlan, type ToolCallStage } from './pipeline'
import type { PipelineHost } from './pipeline-host'
import type { ToolCall, ToolCallResult, ToolChange, ToolDefinition, ToolExecuteOptions, ToolGuard } from './types'

/** One registration: the definition, its frozen wire schema, and its registration order. */
interface RegisteredTool {
  readonly definition: ToolDefinition
  readonly schema: ToolSchema
  readonly serial: number
}

const noGuards: readonly ToolGuard[] = Object.freeze([])

interface GuardEntry {
  readonly guard: ToolGuard
  readonly subject: string | undefined
}

/**
 * The state and logic behind `ctx.tools`, as a plain object.
 *
 * Why it is not the service itself: Cordis traces every property access on a
 * service (each `this.x` inside a method goes through a proxy and allocates),
 * and reaching a service or `ctx.emit` through a context builds an `Error` for
 * its "without inject" message. On the per-call path that cost more than the
 * pipeline itself, so `ToolRegistry` delegates here with one traced access and
 * everything below runs on plain objects (events dispatched on the raw events
 * service, held once: dsh-scope's `rawEvents`). See .agents/notes/implemented/architecture/2026-11-30-untraced-service-cores.md.
 */
export class ToolCatalog implements PipelineHost {
  private readonly registry: ScopedRegistry<RegisteredTool>
  private readonly guardEntries: GuardEntry[] = []
  private readonly schemaViews = new Map<string, { source: readonly ScopedEntry<RegisteredTool>[]; schemas: readonly ToolSchema[] }>()
  private readonly filters = new Map<string, SubjectFilter>()
  private serial = 0
  readonly emitter: ContainedEmitter

  constructor(
    readonly home: Context,
    readonly events: RawEvents,
    readonly defaultTimeoutMs: number,
    readonly reportListenerError: (event: string, error: unknown) => void,
  ) {
    this.emitter = new ContainedEmitter(events)
    this.registry = new ScopedRegistry<RegisteredTool>({ onChange: (change) => this.announce(change) })
  }

  register(ctx: Context, definition: ToolDefinition): () => void {
    const schema = schemaOf(definition)
    const entry: RegisteredTool = Object.freeze({ definition, schema, serial: ++this.serial })
    return this.registry.register(ctx, schema.name, entry)
  }

  guard(ctx: Context, guard: ToolGuard): () => void {
    if (typeof guard !== 'function') throw new TypeError('tools.guard() needs a function')
    const entry: GuardEntry = Object.freeze({ guard, subject: scopeOf(ctx) })
    const dispose = ctx.effect(() => {
      this.guardEntries.push(entry)
      return () => {
        const index = this.guardEntries.indexOf(entry)
        if (index >= 0) this.guardEntries.splice(index, 1)
      }
    }, 'tools.guard()')
    return () => void dispose()
  }

  schemas(subject: string | undefined): readonly ToolSchema[] {
    const source = this.registry.entries(subject)
    const key = subject ?? ''
    const cached = this.schemaViews.get(key)
    if (cached && cached.source === source) return cached.schemas
    const schemas = Object.freeze(source.map((entry) => entry.value.schema))
    this.schemaViews.set(key, { source, schemas })
    return schemas
  }

  lookup(name: string, subject: string | undefined): ToolDefinition | undefined {
    return this.registry.get(name, subject)?.definition
  }

  definition(name: string, agent: Agent): ToolDefinition | undefined {
    return this.registry.get(name, agent.id)?.definition
  }

  isConcurrencySafe(call: Pick<ToolCall, 'name' | 'arguments'>, subject: string | undefined): boolean {
    const definition = this.lookup(call.name, subject)
    if (!definition || typeof definition.isConcurrencySafe !== 'function') return false
    try {
      return definition.isConcurrencySafe(parseArguments(definition, call.arguments)) === true
    } catch {
      return false
    }
  }

  plan(call: ToolCall, options: ToolExecuteOptions): Promise<ToolCallPlan> {
    return planCall(this, call, options)
  }

  stage(call: ToolCall, options: ToolExecuteOptions): ToolCallStage {
    // The staged call itself (not through stageCall): one call frame less per tool call.
    return new StagedCall(this, call, options.agent, options.signal ?? neverAborted)
  }

  execute(call: ToolCall, options: ToolExecuteOptions): Promise<ToolCallResult> {
    return executeCall(this, call, options)
  }

  get version(): number {
    return this.registry.version
  }

  filter(agent: Agent): SubjectFilter {
    return this.filterOf(agent.id)
  }

  guards(agent: Agent): readonly ToolGuard[] {
    if (this.guardEntries.length === 0) return noGuards
    const guards: ToolGuard[] = []
    for (const entry of this.guardEntries) {
      if (entry.subject === undefined || entry.subject === agent.id) guards.push(entry.guard)
    }
    return guards
  }

  /** Drops what was cached for an agent that is gone. */
  forget(subject: string): void {
    this.filters.delete(subject)
    this.schemaViews.delete(subject)
  }

  private filterOf(subject: string): SubjectFilter {
    let filter = this.filters.get(subject)
    if (!filter) this.filters.set(subject, (filter = subjectFilter(subject)))
    return filter
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
    this.emitter.emit(filter, 'tools/change', [payload], (error) => this.reportListenerError('tools/change', error))
  }
}
