import type { InvariantViolation, Invariants } from '@deepseek-ai/dsh-invariants'
import type { Session } from '@deepseek-ai/dsh-session'
import type { Context } from './cordis'
import type { AgentNotification } from './notifications'
import type { Agent } from './types'
// The declarations this entry relies on (ctx.agents, agent/* events), for its own .d.ts build.
import type {} from './events'
import type {} from './service'

/** The name this companion registers with `ctx.invariants`. */
export const REGISTRY_PAIRING = 'agent/registry-pairing'

/** The `details` of every `agent/registry-pairing` violation. */
export interface RegistryPairingDetails {
  /** The agent's id. */
  readonly agent: string
  /** What was seen: the event that broke the rule, or `check` for what `check()` found. */
  readonly event: string
}

/** The notifications a disposed agent must not publish any more (everything but `agent/created`). */
const AFTER_DISPOSAL: readonly AgentNotification[] = [
  'agent/load-report',
  'agent/status',
  'agent/session-start',
  'agent/error',
  'agent/cancel-requested',
  'agent/inbox/enqueue',
  'agent/inbox/dequeue',
  'agent/inbox/discard',
]

/**
 * `@deepseek-ai/dsh-agent/invariant`: the registry's pairing rules, watched
 * from the events and re-checked against `ctx.agents` (and `ctx.sessions`,
 * when mounted).
 *
 * Eagerly, as the events arrive:
 * - each agent object gets one `agent/created`, while no other live agent
 *   has its id, and with its session being the live session of that id;
 * - one `agent/disposed`, after its `agent/created`, while its session is
 *   still live (an agent is detached before its session);
 * - no other `agent/*` notification before `agent/created` or after
 *   `agent/disposed`;
 * - no `session/disposed` for the session of a live agent.
 * By `ctx.invariants.check()`: every agent announced and not disposed is the
 * one `ctx.agents` holds under its id, every agent `ctx.agents` holds was
 * announced and not disposed, and its session is the live session of that id.
 *
 * The `agent/created` listener is prepended, so a vetoing listener registered
 * earlier cannot hide a publication (and then its paired disposal looks
 * unpaired). Agents already live when the companion is mounted are taken as
 * announced. Cost: a set lookup per `agent/*` notification and per session
 * disposal; `check()` is O(live agents).
 */
export const RegistryPairingInvariant = {
  name: 'dsh-agent/invariant',
  inject: ['invariants', 'agents'],
  apply(ctx: Context): void {
    // Reaching a service through a context is costly in Cordis: hold them once.
    const { invariants, agents } = ctx
    const sessions = (): Context['sessions'] | undefined => ctx.get('sessions')
    /** Announced and not disposed. */
    const live = new Set<Agent>()
    /** The live agent of each id (the first, should two be announced). */
    const byId = new Map<string, Agent>()
    const disposed = new WeakSet<Agent>()
    for (const agent of agents.list()) {
      live.add(agent)
      byId.set(agent.id, agent)
    }

    const violation = (agent: Agent, event: string, message: string): InvariantViolation => {
      const details: RegistryPairingDetails = { agent: agent.id, event }
      return { invariant: REGISTRY_PAIRING, message: `agent ${JSON.stringify(agent.id)}: ${message}`, details }
    }
    // From a listener, a violation is noticed, never thrown: a throw would veto a publication.
    const found = (agent: Agent, event: string, message: string): void => invariants.notice(violation(agent, event, message))
    /** Whether `session` is the live session of its id (`undefined` when ctx.sessions is not mounted). */
    const isLive = (session: Session): boolean | undefined => {
      const store = sessions()
      return store ? store.get(session.id) === session : undefined
    }

    ctx.on(
      'agent/created',
      (agent) => {
        if (disposed.has(agent)) return found(agent, 'agent/created', 'agent/created after its agent/disposed')
        if (live.has(agent)) return found(agent, 'agent/created', 'agent/created twice')
        live.add(agent)
        if (byId.has(agent.id)) found(agent, 'agent/created', 'agent/created while another agent with this id is live (not disposed)')
        else byId.set(agent.id, agent)
        if (isLive(agent.session) === false) {
          found(agent, 'agent/created', 'agent/created while its session is not the live session of this id in ctx.sessions')
        }
      },
      true,
    )

    ctx.on('agent/disposed', (agent) => {
      if (disposed.has(agent)) return found(agent, 'agent/disposed', 'agent/disposed twice')
      disposed.add(agent)
      if (!live.delete(agent)) return found(agent, 'agent/disposed', 'agent/disposed without agent/created')
      if (byId.get(agent.id) === agent) {
        byId.delete(agent.id)
        for (const other of live) if (other.id === agent.id) byId.set(other.id, other)
      }
      if (isLive(agent.session) === false) {
        found(agent, 'agent/disposed', 'agent/disposed after its session left ctx.sessions (the agent must be detached first)')
      }
    })

    for (const name of AFTER_DISPOSAL) {
      ctx.on(name, (agent: Agent) => {
        if (disposed.has(agent)) found(agent, name, `${name} after agent/disposed`)
        else if (!live.has(agent)) found(agent, name, `${name} before agent/created`)
      })
    }

    ctx.on('session/disposed', (session) => {
      const agent = byId.get(session.id)
      if (agent?.session === session) found(agent, 'session/disposed', 'its session was disposed before agent/disposed')
    })

    invariants.register(REGISTRY_PAIRING, () => {
      const result: InvariantViolation[] = []
      const store = sessions()
      for (const agent of live) {
        if (agents.get(agent.id) !== agent) result.push(violation(agent, 'check', 'announced and not disposed, but ctx.agents does not hold it'))
        else if (store && store.get(agent.id) !== agent.session) {
          result.push(violation(agent, 'check', 'its session is not the live session of this id in ctx.sessions'))
        }
      }
      for (const agent of agents.list()) {
        if (live.has(agent)) continue
        const what = disposed.has(agent) ? 'ctx.agents still holds it after agent/disposed' : 'ctx.agents holds it without agent/created'
        result.push(violation(agent, 'check', what))
      }
      return result
    })
  },
}

export default RegistryPairingInvariant
