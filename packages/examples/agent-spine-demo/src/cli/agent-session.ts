import { randomBytes } from 'node:crypto'
import type { Agent, AgentHandle, AgentOptions, AgentStatus } from '@deepseek-ai/dsh-agent'
import { SessionId, type AnySessionEvent, type Session } from '@deepseek-ai/dsh-session'
import type { Context } from '../cordis'

/** What the command line watches of its agent. */
export interface AgentObserver {
  /** Every event appended to the agent's session, in seq order. */
  onEvent(session: Session, event: AnySessionEvent): void
  /** The driver went `running` or `idle`. */
  onStatus?(agent: Agent, status: AgentStatus): void
}

/** A new session id that sorts by creation time: `20261130-142501-3f9a`. */
export function newSessionId(now = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0')
  const date = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}`
  const time = `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`
  return `${date}-${time}-${randomBytes(2).toString('hex')}`
}

/**
 * Creates a fresh agent (its session records `cwd`), or resumes the saved
 * session `resume`, owned by `ctx`. The observer's listeners are registered in
 * the agent's scoped context during setup, before the agent is published, so
 * they see every event of this run and only this agent's.
 */
export function openAgent(
  ctx: Context,
  options: { cwd: string; resume?: string; agentOptions: AgentOptions },
  observer: AgentObserver,
): Promise<AgentHandle> {
  const setup = (scoped: Context) => {
    scoped.on('session/event', (session, event) => observer.onEvent(session, event))
    if (observer.onStatus) scoped.on('agent/status', (agent, status) => observer.onStatus!(agent, status))
  }
  if (options.resume !== undefined) {
    return ctx.agents.resume({ resumeSessionId: SessionId(options.resume), agentOptions: options.agentOptions, setup })
  }
  return ctx.agents.create({ sessionId: SessionId(newSessionId()), meta: { cwd: options.cwd }, agentOptions: options.agentOptions, setup })
}

/**
 * A resumed session keeps the workspace it was started in (it is in its
 * system prompt, and changing it would break the cached prefix); when the
 * tools now work elsewhere, the person should know.
 */
export function cwdMismatch(toolsCwd: string, sessionCwd: string | undefined): string | undefined {
  if (sessionCwd === undefined || sessionCwd === toolsCwd) return undefined
  return `this session was started in ${sessionCwd}; the tools now work in ${toolsCwd}`
}
