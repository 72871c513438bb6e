import { randomUUID } from 'node:crypto'
import '@deepseek-ai/dsh-agent'
import '@deepseek-ai/dsh-system-prompt'
import '@deepseek-ai/dsh-tools'
import type { Agent, AgentOptions, AgentRegistry } from '@deepseek-ai/dsh-agent'
import { containedEmitter, heard, subjectFilter, untraced } from '@deepseek-ai/dsh-scope'
import { SessionId } from '@deepseek-ai/dsh-session'
import { SubagentsConfig } from './config'
import { Context, Service, symbols } from './cordis'
import { SubagentsError } from './errors'
import { allowedSchemas, allowListOf, allowListVerdict, type AllowList } from './child-setup'
import { InProcessProvider, type PermissionsLink } from './in-process-provider'
import { closeInterruptedRuns } from './resume'
import { Run, type RunHost } from './run'
import { Slots } from './slots'
import type { AgentType, SpawnSpec, SubagentProvider, SubagentResult, SubagentRun } from './types'

declare module 'cordis' {
  interface Context {
    subagents: Subagents
  }
}

/**
 * `ctx.subagents` (R-SUB-1, R-SUB-2, R-SUB-5): child agents behind a provider
 * seam, the in-process provider by default.
 *
 * `spawn(spec)` checks the spec against the config (the agent type, the
 * depth limit) and returns the run at once; the run waits for one of its
 * parent's `maxConcurrent` slots (spawn order, which is the model's order),
 * then the provider creates the child, runs its first turn and disposes it.
 * The parent's log records `subagent/started` (the child's session id, the
 * call that started it) and `subagent/finished` (status, usage). A run ends
 * when its child answered, when it is cancelled (its spawn signal: the
 * parent's tool call; `cancel()`; the parent being disposed), or when the
 * child fails. A child never outlives its parent: the parent's disposal
 * cancels every run it started, and the in-process provider creates the
 * child through the parent's own context, whose teardown waits for it.
 */
export class Subagents extends Service {
  static readonly inject = ['agents', 'sessions', 'tools', 'systemPrompt']
  static readonly Config = SubagentsConfig

  /** The configured limits. */
  readonly limits: { readonly maxConcurrent: number; readonly maxDepth: number }
  private readonly typeList: readonly AgentType[]
  private readonly defaultType: AgentType | undefined
  private readonly providers: SubagentProvider[] = []
  private readonly runs = new Map<string, Run>()
  private readonly depths = new Map<string, number>()
  /** The allow-lists of the children that have one, by the child's session id (known before it exists). */
  private readonly allowLists = new Map<string, AllowList>()
  /** Each type's allow-list, built once: its matcher and its filtered schema arrays serve every child of the type. */
  private readonly typeAllowLists = new Map<AgentType, AllowList>()
  /** `ctx.agents` behind its tracing proxy, held once: each call through the proxy builds a shadow context. */
  private readonly agents: AgentRegistry
  private readonly host: RunHost
  private readonly emitter
  private readonly log

  constructor(ctx: Context, config: SubagentsConfig = {}) {
    super(ctx, 'subagents')
    // Methods are handed out as plain functions (no shadow context, no proxies per `this.x`): a
    // spawn runs per tool call. `this.ctx` inside a method is still the caller's (setProvider).
    untraced(this)
    this.log = ctx.logger('subagents')
    this.emitter = containedEmitter(ctx)
    this.typeList = Object.freeze((config.types ?? []).map((type) => Object.freeze({ ...type, ...(type.tools ? { tools: Object.freeze([...type.tools]) } : {}) })))
    const names = new Set<string>()
    for (const type of this.typeList) {
      if (names.has(type.name)) throw new SubagentsError('INVALID_CONFIG', `two agent types are named "${type.name}"`)
      names.add(type.name)
    }
    if (config.defaultType !== undefined && !names.has(config.defaultType)) {
      throw new SubagentsError('INVALID_CONFIG', `defaultType "${config.defaultType}" is not one of the agent types (${[...names].join(', ') || 'none'})`)
    }
    for (const type of this.typeList) {
      const list = allowListOf(type)
      if (list) this.typeAllowLists.set(type, list)
    }
    this.defaultType = config.defaultType !== undefined ? this.typeList.find((type) => type.name === config.defaultType) : this.typeList[0]
    this.limits = Object.freeze({ maxConcurrent: config.maxConcurrent ?? 4, maxDepth: config.maxDepth ?? 2 })
    const warn = (message: unknown) => this.log.warn(message instanceof Error ? message.message : String(message))
    // dsh-permissions, looked up once and again only when a service changes: a lookup through a
    // Cordis context builds an Error (a stack capture) each time, which a child paid on every spawn.
    let permissions: PermissionsLink | undefined | null = null
    ctx.on('internal/service', (name) => {
      if (name === 'permissions') permissions = null
    })
    const permissionsLink = () => (permissions === null ? (permissions = ctx.get('permissions') as PermissionsLink | undefined) : permissions)
    this.agents = untracedService(ctx.agents)
    this.providers.push(new InProcessProvider(permissionsLink, warn, this.agents, untracedService(ctx.systemPrompt)))
    this.host = this.runHost(new Slots(this.limits.maxConcurrent), warn)

    // The allow-list's guard (R-SUB-2), one for every child: a hidden tool called by name is refused.
    // Guards are deny-only and monotonic, so no rule or remembered answer can re-allow it.
    ctx.tools.guard(({ agent, call }) => {
      const list = this.allowLists.size ? this.allowLists.get(agent.id) : undefined
      return list ? allowListVerdict(list, call.name) : undefined
    })
    // And the other half: a child sees only its allowed tools' schemas. Every other agent's assembly passes through untouched.
    ctx.on('system-prompt/assemble', (agent, _vars, next) => {
      const list = this.allowLists.size ? this.allowLists.get(agent.id) : undefined
      if (!list) return next()
      return next().then((assembled) => ({ system: assembled.system, tools: allowedSchemas(list, assembled.tools) }))
    })
    ctx.sessions.registerType('subagent/started', { ignorable: true })
    ctx.sessions.registerType('subagent/finished', { ignorable: true })
    ctx.on('agent/disposed', (agent) => {
      for (const run of this.runs.values()) if (run.parent === agent) run.parentGone()
    })
    ctx.on('agent/session-start', (agent, source) => {
      if (source === 'resume') closeInterruptedRuns(agent, warn)
    })
    ctx.effect(() => () => Promise.all([...this.runs.values()].map((run) => (run.cancel(), run.result()))).then(() => {}))
  }

  /** The configured agent types, in config order. */
  types(): readonly AgentType[] {
    return this.typeList
  }

  /** The type named `name`, or the default type without a name. */
  type(name?: string): AgentType | undefined {
    return name === undefined ? this.defaultType : this.typeList.find((type) => type.name === name)
  }

  /** How deep `agent` is: 0 for an agent no run of this service started. */
  depthOf(agent: Agent): number {
    return this.depths.get(agent.id) ?? 0
  }

  /**
   * Starts a child of `spec.parent` and returns its run at once (queued when
   * the parent has `maxConcurrent` children running). Throws
   * `INVALID_SPAWN` for a malformed spec, `UNKNOWN_AGENT_TYPE`,
   * `DEPTH_LIMIT` when the child would be deeper than `maxDepth`, and
   * `PARENT_GONE` when the parent is not a live agent.
   */
  spawn(spec: SpawnSpec): SubagentRun {
    const { parent } = spec ?? {}
    if (!parent || typeof parent !== 'object' || typeof parent.send !== 'function') throw new SubagentsError('INVALID_SPAWN', 'spawn() needs a parent agent (from ctx.agents)')
    if (typeof spec.prompt !== 'string' || spec.prompt.trim() === '') throw new SubagentsError('INVALID_SPAWN', 'spawn() needs a non-empty prompt')
    if (typeof spec.description !== 'string' || spec.description.trim() === '') throw new SubagentsError('INVALID_SPAWN', 'spawn() needs a non-empty description')
    const type = this.type(spec.agentType)
    if (!type) {
      const known = this.typeList.map((t) => t.name).join(', ')
      throw new SubagentsError(
        'UNKNOWN_AGENT_TYPE',
        spec.agentType === undefined ? 'no agent types are configured' : `there is no agent type "${spec.agentType}"; the types are: ${known || 'none'}`,
      )
    }
    const depth = this.depthOf(parent) + 1
    if (depth > this.limits.maxDepth) {
      throw new SubagentsError(
        'DEPTH_LIMIT',
        `subagents nest at most ${this.limits.maxDepth} level${this.limits.maxDepth === 1 ? '' : 's'} deep, and this agent is already at depth ${depth - 1}, so it cannot start another; do this part of the work yourself`,
      )
    }
    if (this.agents.get(parent.id) !== parent) throw new SubagentsError('PARENT_GONE', `agent ${String(parent.id)} is not a live agent of this app`)
    const runId = randomUUID().replace(/-/g, '').slice(0, 10)
    const sessionId = SessionId(`${String(parent.id).slice(0, 160)}-sub-${runId}`)
    const agentOptions: AgentOptions = {
      ...parent.options,
      ...(type.provider !== undefined ? { provider: type.provider } : {}),
      ...(type.model !== undefined ? { model: type.model } : {}),
    }
    const run = new Run(
      {
        runId,
        sessionId,
        parent,
        type,
        prompt: spec.prompt,
        description: spec.description,
        background: spec.background === true,
        depth,
        agentOptions,
        ...(spec.callId !== undefined ? { callId: String(spec.callId) } : {}),
      },
      this.host,
      spec.signal,
    )
    this.runs.set(runId, run)
    this.depths.set(sessionId, depth)
    const list = this.typeAllowLists.get(type)
    if (list) this.allowLists.set(sessionId, list)
    run.begin()
    return run
  }

  /** The runs not over yet (queued or running), of `parent` or of every parent, in spawn order. */
  list(parent?: Agent): readonly SubagentRun[] {
    const runs = [...this.runs.values()]
    return parent ? runs.filter((run) => run.parent === parent) : runs
  }

  /** A run not over yet, by id. */
  get(runId: string): SubagentRun | undefined {
    return this.runs.get(runId)
  }

  /**
   * Makes `provider` run the children spawned from now on (the newest one
   * wins); reverts with the calling context, and the removal function does it
   * early. Runs already started keep their provider.
   */
  setProvider(provider: SubagentProvider): () => void {
    if (!provider || typeof provider.run !== 'function') throw new SubagentsError('INVALID_CONFIG', 'setProvider() needs a provider with a run() method')
    return this.ctx.effect(() => {
      this.providers.push(provider)
      return () => {
        const at = this.providers.lastIndexOf(provider)
        if (at > 0) this.providers.splice(at, 1)
      }
    }, `subagent provider ${provider.name}`) as unknown as () => void
  }

  /** The provider new runs use. */
  get provider(): SubagentProvider {
    return this.providers[this.providers.length - 1]!
  }

  private runHost(slots: Slots, warn: (message: unknown) => void): RunHost {
    const append = (run: Run, write: () => void) => {
      try {
        write()
      } catch (error) {
        warn(`subagent ${run.id}: the parent's log refused its record (${error instanceof Error ? error.message : String(error)})`)
      }
    }
    return {
      slots,
      provider: () => this.provider,
      logStarted: (run) =>
        append(run, () =>
          run.parent.session.append('subagent/started', {
            runId: run.id,
            sessionId: run.sessionId,
            agentType: run.agentType,
            description: run.description,
            background: run.background,
            ...(run.callId !== undefined ? { callId: run.callId } : {}),
          }),
        ),
      logFinished: (run, result) =>
        append(run, () =>
          run.parent.session.append('subagent/finished', {
            runId: run.id,
            status: result.status,
            usage: { ...result.usage },
            modelCalls: result.modelCalls,
            ...(result.error ? { error: { ...result.error } } : {}),
          }),
        ),
      // Notifications nobody hears are not dispatched (no filter, no argument array).
      announceStarted: (run) => {
        if (heard(this.emitter.events, 'subagents/started')) this.emitter.emit(subjectFilter(run.parent.id), 'subagents/started', [{ run, parent: run.parent }], warn)
      },
      ended: (run, result: SubagentResult) => {
        this.runs.delete(run.id)
        this.depths.delete(run.sessionId)
        this.allowLists.delete(run.sessionId)
        if (heard(this.emitter.events, 'subagents/finished')) this.emitter.emit(subjectFilter(run.parent.id), 'subagents/finished', [{ run, parent: run.parent, result }], warn)
      },
    }
  }
}

/** The service object behind Cordis' tracing proxy (its methods use their own fields, never the caller's context). */
function untracedService<T extends object>(traced: T): T {
  return (traced as T & Record<symbol, T | undefined>)[symbols.original] ?? traced
}

export namespace Subagents {
  export type Config = SubagentsConfig
}
