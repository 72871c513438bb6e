import { z } from 'zod'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { ToolError, approvalAnswer, defineTool, type ApprovalRequest, type ToolApproval, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import type { PermissionMode } from './modes'
import type { ModeChangeCause } from './texts'
import { NO_APPROVER, PARENT_PLANNING, PLAN_CANCELLED, notPlanning, planApproved, planQuestion, planRefused } from './texts'

declare module '@deepseek-ai/dsh-tools' {
  interface ToolErrorCodeMap {
    /** `exit_plan_mode` was called outside plan mode. */
    NOT_IN_PLAN_MODE: true
    /** `exit_plan_mode`: the person refused the plan, no one could approve it, or the agent's plan mode is its parent's. */
    PLAN_NOT_APPROVED: true
  }
}

/** What `exit_plan_mode` needs from the permissions service. */
export interface PlanModeHost {
  mode(agent: Agent): PermissionMode
  planInherited(agent: Agent): boolean
  modeAfterPlan(agent: Agent): PermissionMode
  approval(): ToolApproval | undefined
  setMode(agent: Agent, mode: PermissionMode, options?: { cause?: ModeChangeCause }): void
}

/**
 * `exit_plan_mode`: the model presents its plan; the person approves it (the
 * agent goes back to the mode it had before planning, `default` when it
 * started in plan mode) or refuses it (the agent stays in plan mode, and the
 * refusal, with the person's feedback, is the result; an answer that comes
 * after the call's turn was cancelled changes nothing). It asks
 * `ctx.approval` itself, so no rule or remembered answer can approve a
 * plan. Always registered (in every mode), so that entering or leaving plan
 * mode never changes the tool list; outside plan mode it says there is
 * nothing to approve.
 */
export function exitPlanModeTool(permissions: PlanModeHost): ToolDefinition {
  const tool: ToolDefinition<{ plan: string }> = defineTool({
    name: 'exit_plan_mode',
    description:
      'In plan mode: present your finished plan to the person and ask to leave plan mode. The person approves it (then carry it out) or refuses it (then revise it). Call it once the plan is complete, not to ask questions.',
    parameters: z.object({
      plan: z.string().min(1).describe('The plan, in Markdown: the steps you will take and the files you will change.'),
    }),
    effect: 'read',
    async execute({ plan }, run) {
      const { agent } = run
      const mode = permissions.mode(agent)
      if (mode !== 'plan') throw new ToolError('NOT_IN_PLAN_MODE', notPlanning(mode))
      if (permissions.planInherited(agent)) throw new ToolError('PLAN_NOT_APPROVED', PARENT_PLANNING)
      const approval = permissions.approval()
      if (!approval) throw new ToolError('PLAN_NOT_APPROVED', NO_APPROVER)
      const next = permissions.modeAfterPlan(agent)
      const request: ApprovalRequest = Object.freeze({
        call: Object.freeze({ id: run.callId, name: run.name, arguments: JSON.stringify({ plan }) }),
        tool: tool as ToolDefinition,
        args: Object.freeze({ plan }),
        agent,
        signal: run.signal,
        reason: planQuestion(plan, next),
      })
      let answer
      try {
        answer = approvalAnswer(await approval.request(request))
      } catch {
        answer = approvalAnswer('deny')
      }
      // An answer that comes after the turn was cancelled or the agent disposed changes nothing, as a
      // late answer to any other question runs nothing.
      if (run.signal.aborted) throw new ToolError('PLAN_NOT_APPROVED', PLAN_CANCELLED)
      if (answer.decision !== 'allow') throw new ToolError('PLAN_NOT_APPROVED', planRefused(answer.feedback))
      // Approved while planning: the mode it goes back to (its parent may have lowered it meanwhile).
      permissions.setMode(agent, next, { cause: 'plan-approved' })
      return planApproved(permissions.mode(agent))
    },
  })
  return tool as ToolDefinition
}
