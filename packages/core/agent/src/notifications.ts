import { containedEmitter, heard, subjectFilter, type ContainedEmitter, type RawEvents, type SubjectFilter } from '@deepseek-ai/dsh-scope'
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

/** The first value of `AgentEvents`' object fields, overwritten in the same constructor. */
const unset = null as never

/**
 * `agentEvents`' emitter. A class rather than an object literal with an
 * `emit` closure: every agent's emitter then shares one `emit` function (a
 * call site the loop's optimized code inlined stays valid when a new agent
 * appears), and its object fields are first set to `null` so that V8 types
 * them as any object from the first agent on instead of generalizing them
 * (and deoptimizing the code that inlined them) when the second agent's
 * values arrive. See .agents/notes/implemented/architecture/2026-12-02-perf-cold-shapes.md.
 */
class AgentEvents implements AgentEventEmitter {
  readonly filter: SubjectFilter
  private readonly agent: Agent
  private readonly emitter: ContainedEmitter
  private readonly events: RawEvents
  private readonly onError: (error: unknown) => void

  constructor(ctx: Context, agent: Agent) {
    this.filter = unset
    this.agent = unset
    this.emitter = unset
    this.events = unset
    this.onError = unset
    this.filter = subjectFilter(agent.id)
    this.agent = agent
    this.emitter = containedEmitter(ctx)
    this.events = this.emitter.events
    const logger = ctx.logger('dsh-agent')
    this.onError = (error) => logger.warn(error)
  }

  emit<K extends AgentNotification>(name: K, ...args: Rest<K>): void {
    // Several notifications per turn (status, inbox) usually have no listener: no argument list is built for them.
    if (!heard(this.events, name)) return
    this.emitter.emit(this.filter, name, [this.agent, ...args], this.onError)
  }
}

