import Schema from 'schemastery'
import { announce as announceVetoable, rawEvents, subjectFilter, type RawEvents } from '@deepseek-ai/dsh-scope'
import { Context, Service } from './cordis'
import { AgentError } from './errors'
import { initiator, withInitiator } from './initiator'
import { agentEvents } from './notifications'
import type { Agent, AgentEntry, AgentFactory, AgentHandle, CreateAgentOptions, ResumeAgentOptions } from './types'
import type { SessionId } from '@deepseek-ai/dsh-session'

declare module 'cordis' {
  interface Context {
    agents: AgentRegistry
  }
}

/**
 * `ctx.agents`: the live agent registry and the creation seam.
 *
 * It injects no other service, so it can be mounted alone; creating agents
 * needs a factory (dsh-agent-loop registers itself with `setFactory`).
 */
export class AgentRegistry extends Service {
  static readonly Config: Schema<AgentRegistry.Config> = Schema.object({})

  /** The registry's own context (service methods see the caller's as `this.ctx`). */
  private readonly home: Context
  /** The raw events service (dsh-scope `rawEvents`), for the `agent/created` announcement. */
  private readonly events: RawEvents
  private readonly factories: AgentFactory[] = []
  private readonly live = new Map<SessionId, Agent>()

  constructor(ctx: Context, _config: AgentRegistry.Config = {}) {
    super(ctx, 'agents')
    this.home = ctx
    this.events = rawEvents(ctx)
  }

  /**
   * Registers the factory behind `create`/`resume`. It reverts with the
   * caller's fiber; several registrations stack and the newest wins.
   */
  setFactory(factory: AgentFactory): () => void {
    const dispose = this.ctx.effect(() => {
      this.factories.push(factory)
      return () => {
        const index = this.factories.lastIndexOf(factory)
        if (index >= 0) this.factories.splice(index, 1)
      }
    }, 'agents.setFactory()')
    return () => void dispose()
  }

  /** The factory `create`/`resume` use now, if any. */
  get factory(): AgentFactory | undefined {
    return this.factories[this.factories.length - 1]
  }

  /**
   * Creates an agent owned by the calling context: it is disposed when the
   * caller's fiber unloads, when the handle is disposed, or when the factory's
   * provider unloads, whichever comes first. Rejects with `NO_FACTORY` when no
   * factory is registered.
   */
  create(options: CreateAgentOptions): Promise<AgentHandle> {
    const factory = this.factory
    if (!factory) return Promise.reject(noFactory('create'))
    return factory.createAgent(this.ctx, options)
  }

  /** Resumes a persisted session as an agent owned by the calling context. See `create`. */
  resume(options: ResumeAgentOptions): Promise<AgentHandle> {
    const factory = this.factory
    if (!factory) return Promise.reject(noFactory('resume'))
    return factory.resume(this.ctx, options)
  }

  get(id: SessionId | string): Agent | undefined {
    return this.live.get(id as SessionId)
  }

  list(): Agent[] {
    return [...this.live.values()]
  }

  /**
   * Publishes `agent` and announces it with `agent/created`
   * (`enterUnannounced` + `announce`). For drivers.
   *
   * - A live agent with the same id makes it throw `DUPLICATE_ID`.
   * - A synchronous `agent/created` listener throw vetoes the publication: the
   *   agent is removed again, `agent/disposed` is emitted (so the listeners that
   *   saw it created see it disposed), and the error is rethrown. A rejected
   *   promise from a listener is only logged.
   * - The returned detach is bound to this exact agent object: it removes the
   *   agent only if it is still the one registered under its id, emits
   *   `agent/disposed` once, and is harmless to call again. (It cannot be
   *   called while `agent/created` is being dispatched, since `enter` has not
   *   returned yet: a driver that is asked to tear down during that dispatch
   *   detaches once `enter` returns, which keeps created/disposed paired.)
   */
  enter(agent: Agent): () => void {
    const entry = this.enterUnannounced(agent)
    try {
      entry.announce()
    } catch (error) {
      entry.detach()
      throw error
    }
    return entry.detach
  }

  /**
   * Enters `agent` like `enter`, without announcing it yet: it is in
   * `get`/`list` at once, and `agent/created` is emitted by the returned
   * entry's `announce()`. Throws `DUPLICATE_ID` for a live id. For drivers
   * that publish an agent together with its session (R-LIFE-1): enter both
   * registries, then announce both, so that a `session/created` listener
   * already finds the agent here.
   */
  enterUnannounced(agent: Agent): AgentEntry {
    if (this.live.has(agent.id)) {
      throw new AgentError('DUPLICATE_ID', `an agent with id "${agent.id}" is already live`)
    }
    this.live.set(agent.id, agent)
    const logger = this.home.logger('dsh-agent')
    let state: 'entered' | 'announcing' | 'announced' | 'detached' = 'entered'
    let detachAsked = false
    const detach = (): void => {
      // Asked by a listener during the created dispatch: it runs once the dispatch has unwound.
      if (state === 'announcing') {
        detachAsked = true
        return
      }
      if (state === 'detached') return
      const announced = state === 'announced'
      state = 'detached'
      if (this.live.get(agent.id) === agent) this.live.delete(agent.id)
      if (announced) agentEvents(this.home, agent).emit('agent/disposed')
    }
    const announce = (): void => {
      if (state === 'detached') throw new AgentError('DISPOSED', `agent "${agent.id}" was detached before it was announced`)
      if (state !== 'entered') throw new AgentError('DUPLICATE_ID', `agent "${agent.id}" was already announced: an entry is announced once`)
      state = 'announcing'
      try {
        announceVetoable(this.events, subjectFilter(agent.id), 'agent/created', [agent], (error) => logger.warn(error))
      } finally {
        // Announced even when a listener vetoed: the listeners before it saw it created.
        state = 'announced'
        if (detachAsked) detach()
      }
    }
    return { announce, detach }
  }

  /** Runs `fn` with `agent` as the initiator (AsyncLocalStorage): tools and subagents read it. */
  withInitiator<T>(agent: Agent, fn: () => T): T {
    return withInitiator(agent, fn)
  }

  /** The agent whose loop is running the calling code, if any. */
  initiator(): Agent | undefined {
    return initiator()
  }
}

export namespace AgentRegistry {
  export interface Config {}
}

function noFactory(op: string): AgentError {
  return new AgentError(
    'NO_FACTORY',
    `ctx.agents.${op}() needs an agent factory: mount @deepseek-ai/dsh-agent-loop (or another factory) first`,
  )
}
