import { containedEmitter, heard, subjectFilter, type SubjectFilter } from '@deepseek-ai/dsh-scope'
import type { Context, Events } from './cordis'
import type { Agent } from './types'

/** The ordinary, non-vetoable `agent/*` notifications (everything but `agent/created`). */
export type AgentNotification =
  | 'agent/disposed'
  | 'agent/load-report'
  | 'agent/status'
  | 'agent/session-start'
  | 'agent/error'
  | 'agent/cancel-requested'
  | 'agent/inbox/enqueue'
  | 'agent/inbox/dequeue'
  | 'agent/inbox/discard'

type Rest<K extends AgentNotification> = Events[K] extends (agent: Agent, ...rest: infer R) => unknown ? R : never

/** Emits one agent's notifications, scope-filtered, with listener failures contained. */
export interface AgentEventEmitter {
  readonly filter: SubjectFilter
  emit<K extends AgentNotification>(name: K, ...args: Rest<K>): void
}

/**
 * The emitter for `agent`'s ordinary notifications: each is dispatched
 * scope-filtered by the agent's id (global listeners and the agent's own
 * scoped listeners receive it), and a failing listener is logged without
 * stopping the others or the emitter.
 */
export function agentEvents(ctx: Context, agent: Agent): AgentEventEmitter {
  const filter = subjectFilter(agent.id)
  const logger = ctx.logger('dsh-agent')
  const onError = (error: unknown) => logger.warn(error)
  const emitter = containedEmitter(ctx)
  const events = emitter.events
  return {
    filter,
    emit(name, ...args) {
      // Several notifications per turn (status, inbox) usually have no listener: no argument list is built for them.
      if (!heard(events, name)) return
      emitter.emit(filter, name, [agent, ...args], onError)
    },
  }
}
