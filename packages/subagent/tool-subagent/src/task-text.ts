import type { SubagentResult, SubagentRun } from '@deepseek-ai/dsh-subagents'
import { bounded, type TaskHandle } from '@deepseek-ai/dsh-tasks'

/** `12345` as `12,345` (what Intl.NumberFormat('en-US') writes for an integer, at a fraction of its cost). */
function grouped(value: number): string {
  return String(Math.round(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}

/**
 * A finished child's answer as its parent's model reads it (R-SUB-3): the
 * answer, cut to `maxChars` (beginning and end kept), then one bracketed
 * line with the agent type and the run's usage:
 * `[explore subagent: 3 model calls, 12,345 input tokens, 678 output tokens]`.
 */
export function answerText(result: SubagentResult, maxChars: number): string {
  const answer = result.answer.trim() === '' ? '(the subagent gave no final answer)' : bounded(result.answer.trim(), maxChars)
  return `${answer}\n\n${usageLine(result)}`
}

/** The bracketed usage line of a run. */
export function usageLine(result: Pick<SubagentResult, 'agentType' | 'modelCalls' | 'usage'>): string {
  const calls = `${result.modelCalls} model call${result.modelCalls === 1 ? '' : 's'}`
  return `[${result.agentType} subagent: ${calls}, ${grouped(result.usage.inputTokens)} input tokens, ${grouped(result.usage.outputTokens)} output tokens]`
}

/** The result of a background `task` call: the task id, and how the answer will come. */
export function startedText(task: TaskHandle, run: SubagentRun, managed: boolean): string {
  return (
    `Started background task ${task.id} (${run.agentType} subagent: "${run.description}"). ` +
    'Its answer will come to you as a message when it finishes; carry on with other work meanwhile, and do not wait or poll for it.' +
    (managed ? ' task_output shows its progress; task_kill stops it.' : '')
  )
}

/** One line of a task for `task_list` and `task_output`: `task-3 [running] subagent: explore: Find the config loader`. */
export function taskLine(task: TaskHandle): string {
  const state = task.status === 'running' && task.stopRequested ? 'stopping' : task.status
  return `${task.id} [${state}] ${task.kind}: ${task.title.replace(/\s+/g, ' ').trim()}`
}
