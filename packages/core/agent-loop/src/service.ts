import '@deepseek-ai/dsh-agent'
import '@deepseek-ai/dsh-system-prompt'
import '@deepseek-ai/dsh-tools'
import { randomUUID } from 'node:crypto'
import {
  AgentError,
  type Agent,
  type AgentFactory,
  type AgentHandle,
  type AgentLoadReport,
  type AgentOptions,
  type CreateAgentOptions,
  type ResumeAgentOptions,
  type SessionStartSource,
} from '@deepseek-ai/dsh-agent'
import { SessionId, type Session } from '@deepseek-ai/dsh-session'
import type { LoopEnvironment } from './loop-environment'
import { buildRecord, type AgentRecord } from './agent-record'
import { AgentLoopConfig, type ConfigAgent } from './config'
import { Context, Service, symbols, type Fiber } from './cordis'
import { fiberLive } from './fiber'
import { causeOf, checkId, checkMeta, droppedReport, invalid, loadReport, operation, reportsSomething } from './options'
import { LOOP_UNLOADED, OWNER_UNLOADED, PendingCall } from './pending-call'

declare module 'cordis' {
  interface Context {
    agentLoop: AgentLoop
  }
  interface Events {
    /**
     * A config agent (the loop's `agents` config) failed before it was
     * published: contradictory options, a session to resume that does not
     * exist, a vetoed publication… The loop itself keeps running.
     * @mode emit
     */
    'agent-loop/config-start-failed'(sessionId: string, error: unknown): void
  }
}

/** What a create/resume call builds its agent on. */
interface Prepared {
  readonly session: Session
  /** Resumed agents: what the load repaired or warned about. */
  readonly loadReport?: AgentLoadReport
}

/** One create/resume call, as the shared transaction runs it. */
interface TransactionRequest {
  /** How the call reads in messages, e.g. `resume("a")`. */
  readonly operation: string
  readonly signal: AbortSignal | undefined
  readonly source: SessionStartSource
  readonly agentOptions: AgentOptions | undefined
  readonly setup: ((ctx: Context) => void | Promise<void>) | undefined
  /** Validates the options and builds the private session (loading it for a resume, raced with `call`). */
  readonly prepare: (call: PendingCall) => Prepared | Promise<Prepared>
}

/**
 * `ctx.agentLoop`: the concrete agent driver, registered as the factory
 * behind `ctx.agents` (`setFactory(this)`). Everything concrete
 * (`ReactLoopAgent`, its inbox, the turn loop) is package-internal; plugins
 * create and drive agents through `ctx.agents` and the `Agent` interface.
 */
export class AgentLoop extends Service implements AgentFactory {
  static readonly inject = ['agents', 'sessions', 'llm', 'tools', 'systemPrompt']
  static readonly Config = AgentLoopConfig

  private readonly home: Context
  private readonly env: LoopEnvironment
  private active = true
  private readonly inflight = new Set<Promise<unknown>>()
  /** The create/resume calls under way: the loop's unload stops each at once. */
  private readonly calls = new Set<PendingCall>()

  constructor(ctx: Context, config: AgentLoopConfig) {
    super(ctx, 'agentLoop')
    this.home = ctx
    // The loop calls these services several times per step: it holds the services themselves,
    // not Cordis' tracing proxies (whose every property read consults the context's reflect
    // service). None of the methods it calls registers anything on the caller's fiber.
    this.env = {
      home: ctx,
      sessions: untracedService(ctx.sessions),
      llm: untracedService(ctx.llm),
      tools: untracedService(ctx.tools),
      systemPrompt: untracedService(ctx.systemPrompt),
      maxParallelToolCalls: config.maxParallelToolCalls,
      durability: config.durability,
    }
    ctx.agents.setFactory(this)
    // Provider shutdown: refuse new work, stop the create/resume calls under way (a load or a
    // setup still pending is abandoned: they reject ABORTED at once), and wait for them to roll
    // back, so nothing publishes after the dependencies are gone (R-LIFE-6). The agents
    // themselves are torn down by their own effects on this fiber.
    ctx.effect(() => () => {
      this.active = false
      for (const call of this.calls) call.stop(LOOP_UNLOADED)
      return Promise.allSettled([...this.inflight]).then(() => {})
    }, 'agent-loop shutdown')
    if (config.agents.length) {
      const start = Promise.resolve().then(() => this.startConfigAgents(config.agents))
      this.track(start)
    }
  }

  /**
   * Creates an agent synchronously under the exact shared id, with no setup,
   * released with the calling fiber (R-LIFE-8). Throws `DUPLICATE_ID` when the
   * id is live, `DISPOSED` when the loop is shutting down, `ABORTED` when the
   * calling context is unloading.
   */
  create(id: SessionId | string, options: AgentOptions = {}, meta: { cwd?: string } = {}): Agent {
    return this.createOwnedBy(this.ctx, id, options, meta)
  }

  /** The synchronous create: no setup, published at once, owned by `owner`'s fiber. */
  private createOwnedBy(owner: Context, id: SessionId | string, options: AgentOptions, meta: { cwd?: string }): Agent {
    this.assertActive()
    const label = operation('agentLoop.create', id)
    if (!fiberLive(owner.fiber)) throw new AgentError('ABORTED', `${label} was refused: the calling context is unloading`)
    const session = this.env.sessions.prepare(SessionId(checkId(id)), { meta: checkMeta(meta) })
    const record = buildRecord(this.home, this.env, session, { operation: label, agentOptions: options, resumed: false })
    const unbind = owner.effect(() => () => record.dispose(OWNER_UNLOADED), `agent(${session.id}) owner`)
    record.adoptOwner(owner.fiber, () => void unbind())
    try {
      record.publish()
    } catch (error) {
      record.dispose(causeOf(error)).catch((cleanup) => this.home.logger('dsh-agent-loop').warn(cleanup))
      throw error
    }
    this.start(record, 'startup')
    return record.agent
  }

  /** `AgentFactory.createAgent`, behind `ctx.agents.create` (R-LIFE-1…4). */
  createAgent(owner: Context, options: CreateAgentOptions): Promise<AgentHandle> {
    return this.transaction(owner, {
      operation: operation('create', options?.sessionId),
      signal: options?.signal,
      source: 'startup',
      agentOptions: options?.agentOptions,
      setup: options?.setup,
      prepare: () => {
        if (options === null || typeof options !== 'object') throw invalid('create() needs an options object')
        const meta = checkMeta(options.meta ?? {})
        if (options.seed !== undefined && !Array.isArray(options.seed)) throw invalid('seed must be an array of session events')
        // A fork's own events (`ctx.sessions.fork(...).events`) are recognised by the store: the
        // child takes the fork's parent link and the events after the fork's own session/meta.
        return { session: this.env.sessions.prepare(SessionId(checkId(options.sessionId)), { meta, seed: options.seed }) }
      },
    })
  }

  /** `AgentFactory.resume`, behind `ctx.agents.resume` (R-LIFE-7). */
  resume(owner: Context, options: ResumeAgentOptions): Promise<AgentHandle> {
    return this.transaction(owner, {
      operation: operation('resume', options?.resumeSessionId),
      signal: options?.signal,
      source: 'resume',
      agentOptions: options?.agentOptions,
      setup: options?.setup,
      prepare: async (call) => {
        if (options === null || typeof options !== 'object') throw invalid('resume() needs an options object')
        const id = SessionId(checkId(options.resumeSessionId))
        const persistence = this.home.get('sessionPersistence')
        if (!persistence) {
          throw new AgentError('NO_PERSISTENCE', 'resume() needs ctx.sessionPersistence: mount @deepseek-ai/dsh-session-jsonl (or another backend)')
        }
        // Raced: an owner or loop unload (or the signal) rejects at once, even while the load hangs;
        // a load that settles later is dropped, and nothing is built from it. The load gets the stop
        // signal too, so the backend lets go of the session's lock and queue at once.
        const loaded = await call.race((signal) => persistence.load(id, { signal }))
        const report = loadReport(loaded)
        try {
          this.proceed(call)
          return { session: this.env.sessions.prepare(id, { events: loaded.events }), loadReport: report }
        } catch (error) {
          this.logDropped(id, report, error)
          throw error
        }
      },
    })
  }

  /** A load report nobody will hear (the resume rolled back after its load) goes to the log. */
  private logDropped(id: string, report: AgentLoadReport | undefined, error: unknown): void {
    const said = droppedReport(id, report, error)
    if (said !== undefined) this.home.logger('dsh-agent-loop').warn('%s', said)
  }

  private isActive(): boolean {
    return this.active && fiberLive(this.home.fiber)
  }

  private assertActive(): void {
    if (!this.isActive()) throw new AgentError('DISPOSED', 'the agent loop is shutting down')
  }

  /** Throws the call's stop error if it was stopped, or if the loop or the owner started unloading since. */
  private proceed(call: PendingCall, owner?: Fiber): void {
    // The unloads are seen here as soon as they start: their effects (which stop the call) run a microtask later.
    if (!this.isActive()) call.stop(LOOP_UNLOADED)
    if (owner && !fiberLive(owner)) call.stop(OWNER_UNLOADED)
    call.check()
  }

  private track<T>(work: Promise<T>): Promise<T> {
    const settled = work.then(
      () => undefined,
      () => undefined,
    )
    this.inflight.add(settled)
    settled.then(() => this.inflight.delete(settled))
    return work
  }

  /**
   * The rollback-protected create/resume transaction: prepare (load) → build
   * the private session, agent and scope → setup → publish →
   * `agent/load-report` → `agent/session-start` → start. A load or setup
   * failure, a publish failure or veto, the signal aborting, the owner or the
   * loop going away: everything is rolled back and no id is published. The
   * last three stop the call at once, even while a load or a setup hangs
   * (`ABORTED`, naming the cause).
   */
  private transaction(owner: Context, request: TransactionRequest): Promise<AgentHandle> {
    const { operation: label, signal } = request
    if (!this.isActive()) return Promise.reject(new AgentError('DISPOSED', 'the agent loop is shutting down'))
    if (signal?.aborted) {
      return Promise.reject(new AgentError('ABORTED', `${label} was aborted before it started: its signal had aborted`, { cause: signal.reason }))
    }
    if (!fiberLive(owner.fiber)) return Promise.reject(new AgentError('ABORTED', `${label} was refused: its owner (the calling context) is unloading`))
    const call = new PendingCall(label, signal)
    let record: AgentRecord | undefined
    // The owner binding, from the start: before the publication its unload stops the call at
    // once; after, it disposes the agent (and the owner's unload waits for that teardown).
    const unbindOwner = owner.effect(() => () => {
      call.stop(OWNER_UNLOADED)
      return record?.dispose(OWNER_UNLOADED)
    }, `${label} owner`)
    this.calls.add(call)
    return this.track(
      (async () => {
        try {
          const prepared = await request.prepare(call)
          this.proceed(call, owner.fiber)
          record = buildRecord(this.home, this.env, prepared.session, {
            operation: label,
            agentOptions: request.agentOptions ?? {},
            resumed: request.source === 'resume',
            loadReport: prepared.loadReport,
            onTeardown: (cause) => call.stop(cause),
          })
          record.adoptOwner(owner.fiber, () => void unbindOwner())
          const setup = request.setup
          if (setup) {
            const ctx = record.agent.ctx
            await call.race(() => setup(ctx))
          }
          this.proceed(call, owner.fiber)
          record.publish()
          // A created listener may have aborted the caller's signal (or unloaded the loop): the publication stands, and
          // the rollback below tears it down, paired, as for an owner unloaded there.
          call.check()
        } catch (error) {
          if (record) await record.dispose(causeOf(error))
          else void unbindOwner()
          if (record) this.logDropped(record.agent.session.id, record.handle.loadReport, error)
          throw error
        } finally {
          call.settle()
          this.calls.delete(call)
        }
        this.start(record, request.source)
        return record.handle
      })(),
    )
  }

  private start(record: AgentRecord, source: SessionStartSource): void {
    const report = record.handle.loadReport
    if (reportsSomething(report)) record.agent.events.emit('agent/load-report', report)
    record.agent.events.emit('agent/session-start', source)
    record.agent.lifecycle.to('started')
    record.agent.injections.release()
    record.agent.kick()
  }

  private async startConfigAgents(agents: readonly ConfigAgent[]): Promise<void> {
    for (const entry of agents) {
      let sessionId = entry.sessionId ?? entry.resumeSessionId ?? `${entry.id}-session-${randomUUID()}`
      try {
        if (entry.sessionId !== undefined && entry.resumeSessionId !== undefined) {
          sessionId = entry.sessionId
          throw invalid(`config agent "${entry.id}": sessionId and resumeSessionId are mutually exclusive`)
        }
        const agentOptions: AgentOptions = {}
        if (entry.provider !== undefined) agentOptions.provider = entry.provider
        if (entry.model !== undefined) agentOptions.model = entry.model
        if (entry.resumeSessionId !== undefined || (entry.sessionId !== undefined && (await this.persisted(entry.sessionId)))) {
          await this.resume(this.home, { resumeSessionId: SessionId(sessionId), agentOptions })
        } else {
          // A config agent created fresh is owned by the loop's fiber.
          this.createOwnedBy(this.home, sessionId, agentOptions, entry.cwd === undefined ? {} : { cwd: entry.cwd })
        }
      } catch (error) {
        if (!this.active) return
        this.home.logger('dsh-agent-loop').warn('config agent %s failed to start: %s', entry.id, error instanceof Error ? error.message : error)
        this.home.emit('agent-loop/config-start-failed', sessionId, error)
      }
    }
  }

  private async persisted(id: string): Promise<boolean> {
    const persistence = this.home.get('sessionPersistence')
    return persistence ? persistence.exists(SessionId(id)) : false
  }
}

/** The service object behind Cordis' tracing proxy. */
function untracedService<T extends object>(traced: T): T {
  return (traced as T & Record<symbol, T | undefined>)[symbols.original] ?? traced
}
