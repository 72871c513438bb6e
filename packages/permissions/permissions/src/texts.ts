import type { ApprovalScope, ToolEffect } from '@deepseek-ai/dsh-tools'
import type { PermissionMode } from './modes'

/**
 * Every sentence the model reads from dsh-permissions, in one place. Denial
 * reasons are read after dsh-tools' `tool call denied: ` prefix; mode
 * messages are injected as user messages.
 */

const WHAT: Record<ToolEffect, string> = {
  read: 'it reads',
  write: 'it writes',
  execute: 'it runs commands',
  network: 'it uses the network',
}

const GO_ON = 'Keep exploring with tools that only read; when the plan is ready, call exit_plan_mode with it.'

/** Why a call that is not a `read` is refused in plan mode. */
export function planDenial(tool: string, effect: ToolEffect, inherited: boolean): string {
  return `plan mode is on${inherited ? ' (your parent agent is planning)' : ''}: you are planning, and ${tool} (${WHAT[effect]}) does not run while planning. ${GO_ON}`
}

/** Why a shell command is refused in plan mode. */
export function planShellDenial(problem: string, inherited: boolean): string {
  return `plan mode is on${inherited ? ' (your parent agent is planning)' : ''}: you are planning, and only read-only commands run while planning; here ${problem}. ${GO_ON}`
}

/** Why a call a deny rule matches is refused. */
export function ruleDenial(label: string): string {
  return `a permission rule forbids it (${label})`
}

/** Why the repeat guard refuses a call. */
export function repeatDenial(tool: string, failures: number): string {
  return `this exact call (${tool} with the same arguments) already failed ${failures} times in this turn, so it is not run again. Change the arguments or the approach, or tell the person what keeps failing.`
}

/** The question for a call that no tool describes. */
export function genericQuestion(argumentsText: string): string {
  // Never cut: the person approves all of it, and a cut would hide what follows (`…; rm -rf ~`).
  const text = argumentsText.replace(/\s+/g, ' ').trim()
  return `call with ${text || '{}'}`
}

/** What a mode means for the model, after its label. */
const MEANING: Record<PermissionMode, string> = {
  plan:
    'Explore and read as much as you need, but change nothing: calls that write files, run commands (other than read-only ones such as ls, cat, grep, git status, git log, git diff) or use the network are refused. When your plan is ready, call exit_plan_mode with it; the person reviews it, and only their approval ends plan mode.',
  default: 'Reading runs freely; writing files, running commands and network calls ask the person first.',
  'accept-edits': 'File edits inside the workspace run without asking (except in .git and .dsh); commands and network calls still ask the person first.',
  bypass: 'Every tool call runs without asking (calls a rule denies are still refused).',
}

/** Why the mode changed, as the model is told. */
export type ModeChangeCause = 'start' | 'person' | 'plan-approved' | 'parent' | 'api'

const BECAUSE: Record<ModeChangeCause, string> = {
  start: '',
  person: 'The person changed the permission mode. ',
  'plan-approved': 'The person approved your plan. ',
  parent: "Your parent agent's permission mode changed. ",
  api: '',
}

/** The message injected when the mode the model works under changes. */
export function modeMessage(mode: PermissionMode, cause: ModeChangeCause): string {
  return `[Permission mode: ${mode}] ${BECAUSE[cause]}${MEANING[mode]}`
}

/** The tool result of an approved `exit_plan_mode`. */
export function planApproved(mode: PermissionMode): string {
  return `The person approved the plan. Plan mode is over (the mode is now ${mode}): carry out the plan.`
}

/** The error of a refused `exit_plan_mode`. */
export function planRefused(feedback: string | undefined): string {
  return `the person did not approve the plan, so you are still in plan mode${feedback ? `; the person said: ${feedback}` : ''}. Revise the plan (read more if you need to), then call exit_plan_mode again.`
}

/** The error of an `exit_plan_mode` whose turn was cancelled (or whose agent was disposed) before the answer came. */
export const PLAN_CANCELLED =
  'the turn was cancelled while the person was reviewing the plan, so you are still in plan mode; present the plan again with exit_plan_mode when asked to.'

/** The error of `exit_plan_mode` outside plan mode. */
export function notPlanning(mode: PermissionMode): string {
  return `you are not in plan mode (the mode is ${mode}), so there is no plan to approve; go ahead with the task.`
}

/** The error of `exit_plan_mode` in a child whose parent plans. */
export const PARENT_PLANNING =
  'your parent agent is in plan mode, so this agent stays in plan mode; give your plan in your answer instead.'

/** The error of `exit_plan_mode` when no one can approve. */
export const NO_APPROVER =
  'no one can approve the plan here (no approval service is available), so you stay in plan mode; give your plan in your answer instead.'

/** The question `exit_plan_mode` asks the person. */
export function planQuestion(plan: string, next: PermissionMode): string {
  return `leave plan mode (for ${next}) and carry out this plan?\n\n${plan.trim()}`
}

/**
 * A scope in words, for the "always" choice of an approval prompt:
 * `edit_file under src/**`, `shell commands starting with "git status"`,
 * `every write_file call`.
 */
export function describeScope(scope: ApprovalScope, tool: string): string {
  const name = scope.tool ?? tool
  if (scope.command !== undefined) return `${name} commands starting with ${JSON.stringify(scope.command)}`
  if (scope.path !== undefined) return scope.path.endsWith('/**') ? `${name} under ${scope.path}` : `${name} on ${scope.path}`
  return `every ${name} call`
}
