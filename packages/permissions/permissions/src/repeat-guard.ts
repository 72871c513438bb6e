import type { Agent } from '@deepseek-ai/dsh-agent'
import type { SessionId } from '@deepseek-ai/dsh-session'
import type { ToolCall } from '@deepseek-ai/dsh-tools'
import { callIdentity } from './call-facts'

/**
 * The repeat guard's memory (R-PRM-2a): per agent, how many times each
 * identical call (same tool, same arguments in any key order) failed in the
 * open turn. A success of that call clears its count; a new turn clears all.
 */
export class RepeatGuard {
  private readonly byAgent = new Map<SessionId, { turn: number; failures: Map<string, number> }>()

  /** How many times this call already failed in `agent`'s open turn. */
  failures(agent: Agent, call: ToolCall): number {
    const entry = this.byAgent.get(agent.id)
    if (!entry || entry.turn !== turnOf(agent)) return 0
    return entry.failures.get(callIdentity(call)) ?? 0
  }

  /** Counts a call's outcome. */
  record(agent: Agent, call: ToolCall, failed: boolean): void {
    const turn = turnOf(agent)
    let entry = this.byAgent.get(agent.id)
    if (!entry || entry.turn !== turn) this.byAgent.set(agent.id, (entry = { turn, failures: new Map() }))
    const identity = callIdentity(call)
    if (failed) entry.failures.set(identity, (entry.failures.get(identity) ?? 0) + 1)
    else entry.failures.delete(identity)
  }

  forget(agent: Agent): void {
    this.byAgent.delete(agent.id)
  }
}

function turnOf(agent: Agent): number {
  return agent.session?.position.openTurn?.turn ?? -1
}
