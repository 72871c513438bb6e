import { z } from 'zod'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { TaskHandle, Tasks } from '@deepseek-ai/dsh-tasks'
import { defineTool, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import { taskToolError } from './errors'
import { taskLine } from './task-text'

const taskId = z.string().min(1).describe('The task id (task-N), as task_list shows it')

/** The calling agent's task `id`, or `TASK_NOT_FOUND` (another agent's tasks are invisible). */
function ownTask(tasks: Tasks, agent: Agent, id: string): TaskHandle {
  const task = tasks.get(id)
  if (!task || task.owner !== agent) {
    throw taskToolError('TASK_NOT_FOUND', `you have no task "${id}"; task_list shows your background tasks`)
  }
  return task
}

/** The output part of a task's text: what it printed or answered so far. */
function outputPart(task: TaskHandle, label: string, maxChars: number): string {
  const output = task.output().replace(/\n+$/, '')
  if (output === '') return task.status === 'running' ? '(no output yet)' : '(no output)'
  return `${label}:\n${output.length > maxChars ? `[… ${output.length - maxChars} earlier characters not shown …]\n${output.slice(-maxChars)}` : output}`
}

/** `pending`'s value, or undefined as soon as `signal` aborts (at once when it has). */
function untilAborted<T>(pending: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined)
  return new Promise((resolve) => {
    const abort = () => resolve(undefined)
    signal.addEventListener('abort', abort, { once: true })
    pending.then((value) => {
      signal.removeEventListener('abort', abort)
      resolve(value)
    })
  })
}

/**
 * `task_list`, `task_output` and `task_kill` (R-TSK-1a): the owner's model
 * lists, reads and stops its own background tasks (every producer's: the
 * `task` tool's subagents, the `shell` tool's background commands). An
 * agent sees only the tasks it owns. Results are deterministic (no clock),
 * so a resumed session rebuilds the same request.
 */
export function taskTools(tasks: Tasks, maxChars: number): readonly ToolDefinition<any>[] {
  const list = defineTool({
    name: 'task_list',
    description: 'List your background tasks (started by task with background: true, or by shell with background: true): id, status and title.',
    parameters: z.object({}),
    effect: 'read',
    isConcurrencySafe: () => true,
    execute(_args, run) {
      const own = tasks.list(run.agent)
      if (own.length === 0) return 'You have no background tasks.'
      return own.map(taskLine).join('\n')
    },
  })
  const output = defineTool({
    name: 'task_output',
    description:
      "Show a background task's status and its output so far (a shell's output, a subagent's latest text). You do not need this to get a result: a task's outcome comes to you as a message when it ends.",
    parameters: z.object({ taskId }),
    effect: 'read',
    isConcurrencySafe: () => true,
    execute({ taskId: id }, run) {
      const task = ownTask(tasks, run.agent, id)
      return `${taskLine(task)}\n${outputPart(task, task.status === 'running' ? 'Output so far' : 'Output', maxChars)}`
    },
  })
  const kill = defineTool({
    name: 'task_kill',
    description: 'Stop one of your background tasks (its processes or its subagent end with it). The result says how it ended; nothing else is sent about it.',
    parameters: z.object({ taskId }),
    // Stopping a task ends processes and subagents half way (a migration, a build that writes): plan mode must refuse it
    // and the person is asked, like the command that started it.
    effect: 'execute',
    async execute({ taskId: id }, run) {
      const task = ownTask(tasks, run.agent, id)
      if (!task.cancel({ by: 'model' })) {
        return `${task.id} had already ${task.status === 'running' ? 'been asked to stop' : `ended (${task.status})`}; its outcome is delivered to you as a message.`
      }
      // The call waits for the task to end, unless its own signal aborts first (the turn is cancelled, or the
      // call's deadline passed): a task slow to stop must not hold the turn, and its outcome then comes as a message.
      const result = await untilAborted(task.result(), run.signal)
      if (result === undefined && task.status === 'running') {
        tasks.unreported(task)
        return `${task.id} was asked to stop and has not ended yet; its outcome will come to you as a message when it does.`
      }
      // (Ended in the very tick the signal aborted: its outcome was counted as this result's, so report it here.)
      return tasks.notice(task, result ?? (await task.result()))
    },
  })
  return [list, output, kill]
}
