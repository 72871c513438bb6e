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
  /** `agent/error`: a turn failed, or the log stopped being saved (`PERSISTENCE_FAILED`, `APPEND_REFUSED`). */
  onError?(agent: Agent, turn: number, step: number | undefined, error: unknown): void
}

// Crockford's base-32 alphabet in lower case: no i, l, o, u, so an id read aloud or retyped stays unambiguous.
const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz'

/**
 * A new session id that sorts by creation time (local time to the second),
 * then 96 random bits in base 32: `20261201-142501-5j0q3w8c1tz7e4n9v2kx`.
 * Two ids of the same second collide with probability about n²/2^97, so a
 * fresh run never meets `SESSION_LOCKED` or `SESSION_EXISTS` by chance.
 */
export function newSessionId(now = new Date(), random: Uint8Array = randomBytes(12)): string {
  const pad = (n: number) => String(n).padStart(2, '0')
  const date = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}`
  const time = `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`
  return `${date}-${time}-${base32(random)}`
}

/** `bytes` in base 32, 5 bits per character (12 bytes: 20 characters). */
function base32(bytes: Uint8Array): string {
  let out = ''
  let bits = 0
  let value = 0
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
    value &= (1 << bits) - 1
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31]
  return out
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
    if (observer.onError) scoped.on('agent/error', (agent, turn, step, error) => observer.onError!(agent, turn, step, error))
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
