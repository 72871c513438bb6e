import { containedEmitter, heard, subjectFilter, type ContainedEmitter, type SubjectFilter } from '@deepseek-ai/dsh-scope'
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
  return new AgentEvents(ctx, agent)
}

/**
 * One agent's emitter. A class, so that every agent's `emit` is the same
 * function: the agent loop's optimized code calls it at a call site that
 * stays monomorphic when another agent is created (a closure per agent is a
 * new call target there, and deoptimizes that code).
 */
class AgentEvents implements AgentEventEmitter {
  readonly filter: SubjectFilter
  private readonly emitter: ContainedEmitter
  private readonly events: ContainedEmitter['events']
  private readonly onError: (error: unknown) => void

  constructor(
    ctx: Context,
    private readonly agent: Agent,
  ) {
    this.filter = subjectFilter(agent.id)
    const logger = ctx.logger('dsh-agent')
    this.onError = warnTo(logger)
    this.emitter = containedEmitter(ctx)
    this.events = this.emitter.events
  }

  // Fixed parameters, not a rest list: several notifications per turn (status, inbox) usually have no
  // listener, and a rest list is an array built on every call before the method can tell.
  emit<K extends AgentNotification>(name: K, ...args: Rest<K>): void
  emit(name: AgentNotification, a?: unknown, b?: unknown, c?: unknown): void {
    if (!heard(this.events, name)) return
    const arity = ARITY[name]
    const args = arity === 0 ? [this.agent] : arity === 1 ? [this.agent, a] : [this.agent, a, b, c]
    this.emitter.emit(this.filter, name, args, this.onError)
  }
}

/**
 * The listener-error handler that warns on `logger`, made here and not as a
 * function literal assigned straight to a field: V8 allocates such a literal
 * in the old generation, where it keeps its context alive until a full GC.
 */
function warnTo(logger: { warn(error: unknown): void }): (error: unknown) => void {
  return (error) => logger.warn(error)
}

/** How many arguments each notification has after the agent (its `Events` declaration). */
const ARITY: { readonly [K in AgentNotification]: Rest<K>['length'] } = {
  'agent/disposed': 0,
  'agent/load-report': 1,
  'agent/status': 1,
  'agent/session-start': 1,
  'agent/error': 3,
  'agent/cancel-requested': 1,
  'agent/inbox/enqueue': 1,
  'agent/inbox/dequeue': 1,
  'agent/inbox/discard': 1,
}
