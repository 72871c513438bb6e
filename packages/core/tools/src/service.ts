import Schema from 'schemastery'
import { rawEvents, untraced } from '@deepseek-ai/dsh-scope'
import type { ToolSchema } from '@deepseek-ai/dsh-llm'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { Context, Service } from './cordis'
import { ToolCatalog } from './catalog'
import { MAX_TIMEOUT_MS } from './definition'
import type { ToolCallPlan, ToolCallStage } from './pipeline'
import type { ToolCall, ToolCallResult, ToolDefinition, ToolExecuteOptions, ToolGuard } from './types'

/**
 * The deadline of a call to a tool that sets no `timeoutMs` of its own: two
 * minutes. Every call has one, so a tool that hangs (a blocked read, a server
 * that never answers) cannot hold a turn forever; a tool that legitimately
 * runs longer declares its own `timeoutMs`.
 */
export const DEFAULT_TOOL_TIMEOUT_MS = 120_000

declare module 'cordis' {
  interface Context {
    tools: ToolRegistry
  }
}

/**
 * `ctx.tools`: the scoped tool registry and the guarded execution pipeline.
 *
 * Registrations revert with the caller's fiber and are agent-local when made
 * through an agent's scoped context (`agent.ctx.tools.register(...)`): that
 * agent sees them over global tools of the same name, other agents never see
 * them. The newest registration of a name in a scope wins; disposing it
 * uncovers the previous one, so a reloaded plugin leaves exactly its new tool.
 *
 * Each method is one delegation to a plain `ToolCatalog` (see there why).
 */
export class ToolRegistry extends Service {
  static readonly Config: Schema<ToolRegistry.Config> = Schema.object({
    defaultTimeoutMs: Schema.natural()
      .max(MAX_TIMEOUT_MS)
      .default(DEFAULT_TOOL_TIMEOUT_MS)
      .description('Deadline in milliseconds of a call to a tool that sets no timeoutMs of its own; 0 turns it off.'),
  })

  private readonly catalog: ToolCatalog

  constructor(ctx: Context, config: ToolRegistry.Config = {}) {
    super(ctx, 'tools')
    untraced(this)
    const logger = ctx.logger('tools')
    const catalog = new ToolCatalog(ctx, rawEvents(ctx), config.defaultTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS, (event, error) =>
      logger.warn(`a ${event} listener failed: %s`, error instanceof Error ? error.message : error),
    )
    this.catalog = catalog
    ctx.on('agent/disposed', (agent) => catalog.forget(agent.id))
  }

  /**
   * Registers a tool for the caller's fiber (global, or local to the agent
   * whose scoped context makes the call) and returns a function that removes
   * it early. Throws `INVALID_DEFINITION` for a definition that cannot be sent
   * to a model or run.
   */
  register<Args>(definition: ToolDefinition<Args>): () => void {
    return this.catalog.register(this.ctx, definition as ToolDefinition)
  }

  /**
   * Adds a guard for the caller's fiber: global, or local to the agent whose
   * scoped context makes the call. Guards run in registration order after
   * `tools/pre-execute` and approval; each can only deny.
   */
  guard(guard: ToolGuard): () => void {
    return this.catalog.guard(this.ctx, guard)
  }

  /**
   * The schemas of the tools `agent` sees (global ones without an agent),
   * sorted by name. The array and its schemas are frozen, and the same array
   * is returned until a registration changes, so the request prefix built
   * from it is byte-stable across plugin reloads (R-SP-1).
   */
  schemas(agent?: Agent): readonly ToolSchema[] {
    return this.catalog.schemas(agent?.id)
  }

  /** The definition `agent` would run under `name` (its own over a global one), if any. */
  definition(name: string, agent?: Agent): ToolDefinition | undefined {
    return this.catalog.lookup(name, agent?.id)
  }

  /**
   * Whether the call may overlap other concurrency-safe calls. False when the
   * tool is unknown, its arguments do not parse or validate, it has no
   * `isConcurrencySafe`, or that returns anything but `true` or throws. The
   * loop asks just before starting each call.
   */
  isConcurrencySafe(call: Pick<ToolCall, 'name' | 'arguments'>, agent?: Agent): boolean {
    return this.catalog.isConcurrencySafe(call, agent?.id)
  }

  /**
   * Runs one call through the pipeline (R-TOOL-1) on behalf of `agent` and
   * resolves its result. It never rejects: every failure is an error result
   * with a code (R-TOOL-2). See `ToolCallResult`.
   */
  execute(call: ToolCall, options: ToolExecuteOptions): Promise<ToolCallResult> {
    return this.catalog.execute(call, options)
  }

  /**
   * The same pipeline in three stages, for a caller that runs several calls
   * at once and keeps everything but the bodies in model order (R-TOOL-3):
   * the returned promise resolves once the policy stage (lookup, arguments,
   * `tools/pre-execute`, approval, guards) is over; `plan.run()` runs the
   * body; `plan.finish()` reviews, finalizes, emits `tools/result` and
   * resolves the result. `execute` is `plan`, `run`, `finish` in a row.
   */
  plan(call: ToolCall, options: ToolExecuteOptions): Promise<ToolCallPlan> {
    return this.catalog.plan(call, options)
  }

  /**
   * The same stages again, for a caller that drives many calls (the agent
   * loop's tool batch): nothing is awaited here, and each stage returns a
   * promise only when it had something to wait for (a listener, a guard's
   * promise, a body's promise); otherwise it is over when it returns, and
   * `finish()` returns the result itself. Decisions, order and result codes
   * are `plan`'s. See `ToolCallStage` for the order of use.
   */
  stage(call: ToolCall, options: ToolExecuteOptions): ToolCallStage {
    return this.catalog.stage(call, options)
  }

  /** Increments whenever a registration changes; a cheap cache key for derived data. */
  get version(): number {
    return this.catalog.version
  }
}

export namespace ToolRegistry {
  export interface Config {
    /**
     * Deadline of a call to a tool that sets no `timeoutMs`: the call returns
     * `TIMEOUT` and its signal aborts once it elapses. Default
     * `DEFAULT_TOOL_TIMEOUT_MS` (2 minutes); 0 turns it off (then such a call
     * has no deadline at all); at most 2^31 - 1.
     */
    defaultTimeoutMs?: number
  }
}
