import '@deepseek-ai/dsh-agent'
import '@deepseek-ai/dsh-system-prompt'
import '@deepseek-ai/dsh-tools'
import { randomUUID } from 'node:crypto'
import {
  AgentError,
  type Agent,
  type AgentFactory,
  type AgentHandle,
  type AgentOptions,
  type CreateAgentOptions,
  type ResumeAgentOptions,
  type SessionStartSource,
} from '@deepseek-ai/dsh-agent'
import { scoped } from '@deepseek-ai/dsh-scope'
import { SessionId, type Session } from '@deepseek-ai/dsh-session'
import { ReactLoopAgent, type LoopEnvironment } from './agent'
import { AgentLoopConfig, type ConfigAgent } from './config'
import { Context, Service, symbols, type Fiber } from './cordis'

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

/** The plugin behind each agent's private scope: a child fiber of the loop that agent-local registrations revert with. */
const AgentScope = { name: 'dsh-agent-scope', apply: () => {} }

/** One agent's private resources and its single, memoized teardown boundary. */
interface AgentRecord {
  readonly agent: ReactLoopAgent
  readonly handle: AgentHandle
  /** Aborts when the agent's teardown starts (its owner or the loop went away, or its handle was disposed). */
  readonly teardown: AbortSignal
  /** Binds the agent's lifetime to `owner`'s fiber. */
  bindOwner(owner: Context): void
  /** Enters the session store then the agent registry, announcing both (R-LIFE-1). */
  publish(): void
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
    }
    ctx.agents.setFactory(this)
    // Provider shutdown: refuse new work, then wait for create/resume calls already under way,
    // so nothing publishes after the dependencies are gone (R-LIFE-6). The agents themselves
    // are torn down by their own effects on this fiber.
    ctx.effect(() => () => {
      this.active = false
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
   * id is live, `DISPOSED` when the loop is shutting down.
   */
  create(id: SessionId | string, options: AgentOptions = {}, meta: { cwd?: string } = {}): Agent {
    return this.createOwnedBy(this.ctx, id, options, meta)
  }

  /** The synchronous create: no setup, published at once, owned by `owner`'s fiber. */
  private createOwnedBy(owner: Context, id: SessionId | string, options: AgentOptions, meta: { cwd?: string }): Agent {
    this.assertActive()
    const session = this.env.sessions.prepare(SessionId(checkId(id)), { meta: checkMeta(meta) })
    const record = this.build(session, options, false)
    try {
      record.bindOwner(owner)
      record.publish()
    } catch (error) {
      record.handle.dispose().catch((cleanup) => this.home.logger('dsh-agent-loop').warn(cleanup))
      throw error
    }
    this.start(record, 'startup')
    return record.agent
  }

  /** `AgentFactory.createAgent`, behind `ctx.agents.create` (R-LIFE-1…4). */
  createAgent(owner: Context, options: CreateAgentOptions): Promise<AgentHandle> {
    return this.transaction(owner, options?.signal, 'startup', options?.agentOptions, options?.setup, () => {
      if (options === null || typeof options !== 'object') throw invalid('create() needs an options object')
      const meta = checkMeta(options.meta ?? {})
      if (options.seed !== undefined && !Array.isArray(options.seed)) throw invalid('seed must be an array of session events')
      return this.env.sessions.prepare(SessionId(checkId(options.sessionId)), { meta, seed: options.seed })
    })
  }

  /** `AgentFactory.resume`, behind `ctx.agents.resume` (R-LIFE-7). */
  resume(owner: Context, options: ResumeAgentOptions): Promise<AgentHandle> {
    return this.transaction(owner, options?.signal, 'resume', options?.agentOptions, options?.setup, async () => {
      if (options === null || typeof options !== 'object') throw invalid('resume() needs an options object')
      const id = SessionId(checkId(options.resumeSessionId))
      const persistence = this.home.get('sessionPersistence')
      if (!persistence) {
        throw new AgentError('NO_PERSISTENCE', 'resume() needs ctx.sessionPersistence: mount @deepseek-ai/dsh-session-jsonl (or another backend)')
      }
      const loaded = await untilAborted(persistence.load(id), options.signal)
      this.checkProceed(options.signal)
      return this.env.sessions.prepare(id, { events: loaded.events })
    })
  }

  private assertActive(): void {
    if (!this.active) throw new AgentError('DISPOSED', 'the agent loop is shutting down')
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
   * The rollback-protected create/resume transaction: load → build the private
   * session, agent and scope → setup → publish → `agent/session-start` → start.
   * A load or setup failure, a publish failure or veto, the signal aborting,
   * the owner or the loop going away: everything is rolled back and no id is
   * published.
   */
  private transaction(
    owner: Context,
    signal: AbortSignal | undefined,
    source: SessionStartSource,
    agentOptions: AgentOptions | undefined,
    setup: ((ctx: Context) => void | Promise<void>) | undefined,
    load: () => Session | Promise<Session>,
  ): Promise<AgentHandle> {
    if (!this.active) return Promise.reject(new AgentError('DISPOSED', 'the agent loop is shutting down'))
    if (signal?.aborted) return Promise.reject(aborted(signal))
    return this.track(
      (async () => {
        const session = await load()
        this.checkProceed(signal)
        const record = this.build(session, agentOptions ?? {}, source === 'resume')
        try {
          record.bindOwner(owner)
          if (setup) {
            const stop = signal ? AbortSignal.any([signal, record.teardown]) : record.teardown
            await untilAborted(Promise.resolve().then(() => setup(record.agent.ctx)), stop)
          }
          this.checkProceed(signal)
          if (record.agent.disposing) throw new AgentError('ABORTED', 'the agent was disposed before it was published')
          record.publish()
        } catch (error) {
          await record.handle.dispose()
          throw error
        }
        this.start(record, source)
        return record.handle
      })(),
    )
  }

  private checkProceed(signal: AbortSignal | undefined): void {
    if (!this.active) throw new AgentError('DISPOSED', 'the agent loop is shutting down')
    if (signal?.aborted) throw aborted(signal)
  }

  private start(record: AgentRecord, source: SessionStartSource): void {
    record.agent.events.emit('agent/session-start', source)
    record.agent.started = true
    record.agent.releaseHeld()
    record.agent.kick()
  }

  private build(session: Session, agentOptions: AgentOptions, resumed: boolean): AgentRecord {
    const home = this.home
    const env = this.env
    let scope!: ReturnType<Context['plugin']>
    let agent!: ReactLoopAgent
    let detachSession: (() => void) | undefined
    let detachAgent: (() => void) | undefined
    let unbindOwner: (() => void) | undefined
    let ownerFiber: Fiber | undefined

    // Aborted when teardown starts: a setup still running is abandoned (R-LIFE-1, R-LIFE-6).
    const teardown = new AbortController()
    // Memoized before they run: a dispose() from a listener of the teardown's own events gets the same promise.
    const close = memoized(async () => {
      teardown.abort()
      await agent.stop()
      detachAgent?.()
      detachSession?.()
      unbindOwner?.()
      env.llm.forgetLoopRequests(session.id)
    })
    const finish = memoized(async () => {
      await close()
      await scope.dispose()
    })

    // One effect on the loop's fiber owns the scope fiber and the teardown, in that order: on
    // provider unload, Cordis disposes it as a unit, so the drain and the detaches run before the
    // agent's scope is revoked (a plain child fiber would be revoked concurrently).
    const lifetime = home.effect(function* () {
      scope = home.plugin(AgentScope)
      yield scope.dispose
      yield () => finish()
    }, `agent(${session.id})`)

    agent = new ReactLoopAgent(env, session, scoped(scope.ctx, session.id), Object.freeze({ ...agentOptions }), resumed)
    // Handle dispose, owner unload and provider unload all end here: one memoized, fully settled boundary.
    const handle: AgentHandle = Object.freeze({
      agent,
      dispose: () => {
        Promise.resolve(lifetime()).catch((error) => home.logger('dsh-agent-loop').warn(error))
        return finish()
      },
    })
    return {
      agent,
      handle,
      teardown: teardown.signal,
      bindOwner(owner: Context) {
        const unbind = owner.effect(() => () => handle.dispose(), `agent(${session.id}) owner`)
        unbindOwner = () => void unbind()
        ownerFiber = owner.fiber
      },
      publish() {
        detachSession = env.sessions.enter(session)
        // From here `agent/created` listeners may already send input; the drain starts only in `start`.
        agent.published = true
        try {
          detachAgent = home.agents.enter(agent)
        } catch (error) {
          agent.published = false
          const detach = detachSession
          detachSession = undefined
          detach()
          throw error
        }
        // A created listener may have disposed the owner (or the agent): the publication stands
        // (created was announced), and the caller's rollback now tears it down, paired.
        if (ownerFiber?.uid === null || agent.disposing) {
          throw new AgentError('ABORTED', `agent ${session.id} lost its owner while it was being announced`)
        }
      },
    }
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

/**
 * `run` once: the first call starts it (its synchronous part runs at once)
 * and every call, including one made from inside that synchronous part,
 * returns the same promise.
 */
function memoized(run: () => Promise<void>): () => Promise<void> {
  let promise: Promise<void> | undefined
  return () => {
    if (promise) return promise
    let adopt!: (value: Promise<void>) => void
    promise = new Promise<void>((resolve) => (adopt = resolve))
    adopt(run())
    return promise
  }
}

/** The service object behind Cordis' tracing proxy. */
function untracedService<T extends object>(traced: T): T {
  return (traced as T & Record<symbol, T | undefined>)[symbols.original] ?? traced
}

function invalid(message: string): AgentError {
  return new AgentError('INVALID_OPTIONS', message)
}

function aborted(signal: AbortSignal): AgentError {
  return new AgentError('ABORTED', 'the operation was aborted by its signal', { cause: signal.reason })
}

function checkId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0) throw invalid('a session id must be a non-empty string')
  return id
}

function checkMeta(meta: unknown): { cwd?: string; parentSession?: SessionId } {
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) throw invalid('meta must be an object')
  const { cwd, parentSession } = meta as { cwd?: unknown; parentSession?: unknown }
  if (cwd !== undefined && typeof cwd !== 'string') throw invalid('meta.cwd must be a string')
  if (parentSession !== undefined && typeof parentSession !== 'string') throw invalid('meta.parentSession must be a string')
  const out: { cwd?: string; parentSession?: SessionId } = {}
  if (cwd !== undefined) out.cwd = cwd
  if (parentSession !== undefined) out.parentSession = SessionId(parentSession)
  return out
}

/** Resolves with `work`, or rejects `ABORTED` as soon as `signal` aborts (the work keeps running on its own). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted(signal))
    if (signal.aborted) return onAbort()
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
