import Schema from 'schemastery'
import { announce, rawEvents, subjectFilter, type RawEvents } from '@deepseek-ai/dsh-scope'
import { Context, Service } from './cordis'
import { AgentError } from './errors'
import { initiator, withInitiator } from './initiator'
import { agentEvents } from './notifications'
import type { Agent, AgentFactory, AgentHandle, CreateAgentOptions, ResumeAgentOptions } from './types'
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
   * Publishes `agent` and announces it with `agent/created`. For drivers: the
   * agent loop calls it inside its create transaction.
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
    if (this.live.has(agent.id)) {
      throw new AgentError('DUPLICATE_ID', `an agent with id "${agent.id}" is already live`)
    }
    this.live.set(agent.id, agent)
    const logger = this.home.logger('dsh-agent')
    let detached = false
    const detach = () => {
      if (detached) return
      detached = true
      if (this.live.get(agent.id) === agent) this.live.delete(agent.id)
      agentEvents(this.home, agent).emit('agent/disposed')
    }
    try {
      announce(this.events, subjectFilter(agent.id), 'agent/created', [agent], (error) => logger.warn(error))
    } catch (error) {
      detach()
      throw error
    }
    return detach
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
