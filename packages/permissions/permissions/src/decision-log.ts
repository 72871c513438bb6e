import type { Agent } from '@deepseek-ai/dsh-agent'
import type { ApprovalAnswer } from '@deepseek-ai/dsh-tools'
import type { PermissionDecisionRecord } from './events'
import type { PermissionMode } from './modes'

interface Entry {
  readonly agent: Agent
  readonly record: PermissionDecisionRecord
  logged: boolean
}

/**
 * The `permission/decision` records (R-PRM-3): one per call that reached the
 * policy stage, appended when the decision is known. An ask waits for its
 * answer (`tools/approval`); one that never gets an answer (no approval
 * service, a cancel) is appended when the call's result is (`tools/result`).
 * A call is known from its decision to its result.
 */
export class DecisionLog {
  private readonly entries = new Map<string, Entry>()

  constructor(private readonly warn: (message: string) => void) {}

  /** An ask: its record is appended once the person answered, or the call ended. */
  asking(agent: Agent, record: PermissionDecisionRecord): void {
    this.entries.set(key(agent, record.callId), { agent, record, logged: false })
  }

  /** Appends a decision now. */
  log(agent: Agent, record: PermissionDecisionRecord): void {
    const id = key(agent, record.callId)
    const entry = this.entries.get(id)
    if (entry) entry.logged = true
    else this.entries.set(id, { agent, record, logged: true })
    try {
      agent.session.append('permission/decision', { ...record, ...(record.remember ? { remember: { ...record.remember } } : {}) })
    } catch (error) {
      this.warn(`could not log the permission decision of call ${record.callId}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  /** The person answered an ask: its record gets the answer and is appended. Returns the mode it was asked in. */
  answered(agent: Agent, callId: string, answer: ApprovalAnswer): PermissionMode | undefined {
    const entry = this.entries.get(key(agent, callId))
    if (!entry || entry.logged) return entry?.record.mode
    entry.record.answer = answer.decision
    if (answer.remember) entry.record.remember = { ...answer.remember }
    this.log(agent, entry.record)
    return entry.record.mode
  }

  /** The call has its result: an ask no one answered is appended as it is; the call is forgotten. */
  settled(agent: Agent, callId: string): void {
    const id = key(agent, callId)
    const entry = this.entries.get(id)
    if (entry && !entry.logged) this.log(agent, entry.record)
    this.entries.delete(id)
  }

  /** Forgets an agent's calls (it was disposed). */
  forget(agent: Agent): void {
    for (const [id, entry] of this.entries) if (entry.agent.id === agent.id) this.entries.delete(id)
  }
}

function key(agent: Agent, callId: string): string {
  return `${agent.id}\u0000${callId}`
}
