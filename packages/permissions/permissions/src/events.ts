import type { PermissionMode } from './modes'
import type { PermissionDecision } from './rules'
import type { ModeChangeCause } from './texts'

/**
 * The record of one permission decision, as logged in `permission/decision`.
 * `decision` is what happened to the call at the policy stage (`ask` when a
 * person was asked), `rule` says why in a few words (`mode default: write
 * asks`, `user rule shell(command: "rm") → deny`, `plan mode: read-only`,
 * `repeat guard`), `mode` is the mode the call was judged in. For an ask,
 * `answer` is the person's answer (absent when no one answered: no approval
 * service, or the call was cancelled) and `remember` the scope they chose to
 * remember it for, within this session and mode.
 */
export interface PermissionDecisionRecord {
  callId: string
  tool: string
  decision: PermissionDecision
  rule: string
  mode: PermissionMode
  answer?: 'allow' | 'deny'
  remember?: { tool?: string; path?: string; command?: string }
}

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    /**
     * Log-only (ignorable): dsh-permissions decided a tool call (R-PRM-3).
     * One per call that reached the policy stage, written when the decision
     * is known (for an ask, when the person answered), between the call's
     * `tool/call` and its `tool/result`. Never model-visible.
     */
    'permission/decision': PermissionDecisionRecord
    /**
     * Log-only (ignorable): the permission mode the agent works under changed
     * (R-PRM-3), from `previous` to `mode`, because of `cause` (`start`: the
     * session began, or was resumed, in another mode than the model was last
     * told; `person`; `plan-approved`: `exit_plan_mode` was approved;
     * `parent`: a parent agent's mode lowered this one's; `api`). Written
     * just before the injected message that tells the model.
     */
    'permission/mode': { mode: PermissionMode; previous: PermissionMode; cause: ModeChangeCause }
  }
}

export {}
