import type { Agent } from '@deepseek-ai/dsh-agent'
import type { SessionId } from '@deepseek-ai/dsh-session'
import type { ApprovalScope } from '@deepseek-ai/dsh-tools'
import { PermissionsError } from './errors'
import type { PermissionMode } from './modes'
import { ruleProblem, type LayeredRule, type PermissionRule } from './rules'

/**
 * Answers the person asked to remember (R-PRM-3): per agent (so per
 * session), per mode, in memory only. Nothing here is ever written to a
 * file, and an answer given in one mode never applies in another.
 */
export class RememberedAnswers {
  private readonly byAgent = new Map<SessionId, Map<PermissionMode, LayeredRule[]>>()

  /** Keeps `decision` for calls in `scope`, for `agent` in `mode`. Throws `INVALID_SETTINGS` for a scope whose globs do not compile. */
  remember(agent: Agent, scope: ApprovalScope & { tool: string }, decision: 'allow' | 'deny', mode: PermissionMode): void {
    const match: { path?: string; command?: string } = {}
    if (scope.path !== undefined) match.path = scope.path
    if (scope.command !== undefined) match.command = scope.command
    const rule: PermissionRule = Object.freeze({ tool: scope.tool, ...(Object.keys(match).length ? { match: Object.freeze(match) } : {}), decision })
    const problem = ruleProblem(rule)
    if (problem) throw new PermissionsError('INVALID_SETTINGS', `cannot remember ${JSON.stringify(rule)}: ${problem}`)
    let modes = this.byAgent.get(agent.id)
    if (!modes) this.byAgent.set(agent.id, (modes = new Map()))
    const list = modes.get(mode) ?? []
    if (!list.some((existing) => JSON.stringify(existing.rule) === JSON.stringify(rule))) list.push(Object.freeze({ layer: 'remembered', rule }))
    modes.set(mode, list)
  }

  /** The remembered rules of `agent` in `mode`. */
  rules(agent: Agent, mode: PermissionMode): readonly LayeredRule[] {
    return this.byAgent.get(agent.id)?.get(mode) ?? []
  }

  forget(agent: Agent): void {
    this.byAgent.delete(agent.id)
  }
}
