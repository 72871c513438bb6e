import type { Agent } from '@deepseek-ai/dsh-agent'
import Subagents, { type AgentTypeConfig, type SubagentRun } from '@deepseek-ai/dsh-subagents'
import Tasks, { type TaskHandle } from '@deepseek-ai/dsh-tasks'
import ToolSubagent from '@deepseek-ai/dsh-tool-subagent'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import type { Context } from '../cordis'
import { clip } from './text'

/**
 * The demo's one agent type: a read-only explorer with the workspace's read
 * tools. Read-only, so several `task` calls of one step run at once, and in
 * plan mode it may run too.
 */
export const EXPLORE_AGENT: AgentTypeConfig = {
  name: 'explore',
  description: 'Reads and searches the workspace to answer a question about it (where something is defined, how a part works); changes nothing.',
  systemPrompt:
    'You explore a codebase to answer one question. Search and read with the tools you have, as much as you need, then answer with what you found: ' +
    'the files and lines that matter, and what they do. You cannot change files or run commands.',
  tools: ['read_file', 'list_dir', 'glob', 'grep'],
}

/**
 * Mounts background tasks (`ctx.tasks`, also the shell's `background: true`),
 * subagents with the explore type, and the `task` tool with `task_list`,
 * `task_output` and `task_kill`, outside the spine bundle (which stays the
 * spine alone).
 */
export async function mountSubagents(ctx: Context): Promise<void> {
  await ctx.plugin(Tasks)
  await ctx.plugin(Subagents, { types: [EXPLORE_AGENT] })
  await ctx.plugin(ToolSubagent)
}

/** One line of a task for `/tasks`: `task-2  running  shell: npm test  (12 s)`. */
function taskLine(task: TaskHandle, now: number): string {
  const state = task.status === 'running' && task.stopRequested ? 'stopping' : task.status
  const seconds = Math.max(0, Math.round(((task.endedAt ?? now) - task.startedAt) / 1000))
  return `  ${task.id}  ${state}  ${task.kind}: ${clip(task.title.replace(/\s+/g, ' '), 80)}  (${seconds} s)`
}

/**
 * `/tasks` and `/tasks stop [id]`: lists the current agent's background
 * tasks, or stops one (every running one without an id). A stop is reported
 * to the model without starting a turn.
 */
export function tasksCommand(ctx: Context, agent: Agent, args: string): string[] {
  const tasks = ctx.get('tasks')
  if (!tasks) return ['background tasks are not available']
  const [verb, id] = args.trim().split(/\s+/)
  if (!verb) {
    const own = tasks.list(agent)
    if (own.length === 0) return ['no background tasks (the model starts them with task or shell and background: true)']
    const now = Date.now()
    return [`background tasks (${own.length}):`, ...own.map((task) => taskLine(task, now)), 'stop one with /tasks stop <id>, all with /tasks stop']
  }
  if (verb !== 'stop') return [`unknown /tasks subcommand "${verb}": use /tasks or /tasks stop [id]`]
  if (id === undefined) {
    const stopped = tasks.stopAll(agent)
    return [stopped === 0 ? 'no running task to stop' : `stopping ${stopped} task${stopped === 1 ? '' : 's'}; the model is told without starting a turn`]
  }
  const task = tasks.get(id)
  if (!task || task.owner !== agent) return [`no task "${id}" in this session; /tasks lists them`]
  return [task.cancel() ? `stopping ${id}; the model is told without starting a turn` : `${id} is not running (${task.status})`]
}

/** What a child did, as one indented line, or undefined for what is not shown. */
function childLine(run: SubagentRun, event: AnySessionEvent): string | undefined {
  const who = `${run.agentType}`
  switch (event.type) {
    case 'tool/call':
      // The arguments are logged as the model wrote them (JSON text).
      return `    ↳ ${who}: ${event.data.name} ${clip(String(event.data.arguments).replace(/\s+/g, ' '), 100)}`
    case 'tool/result':
      return event.data.error ? `    ↳ ${who}: ✗ ${event.data.error.code}` : undefined
    default:
      return undefined
  }
}

/**
 * Shows the activity of `parent`'s children under the call that started
 * them: a line when a child starts, one per tool it calls (and per failed
 * result), and one when it ends. Background children print the same lines
 * as they work. Returns the function that stops watching.
 */
export function watchSubagents(ctx: Context, parent: Agent, line: (text: string) => void): () => void {
  const children = new Map<string, SubagentRun>()
  const disposers = [
    ctx.on('subagents/started', ({ run }) => {
      if (run.parent !== parent) return
      children.set(String(run.sessionId), run)
      line(`  ↳ ${run.agentType} subagent${run.background ? ' (background)' : ''}: ${clip(run.description, 80)}`)
    }),
    ctx.on('session/event', (session, event) => {
      const run = children.get(String(session.id))
      if (!run) return
      const text = childLine(run, event)
      if (text) line(text)
    }),
    ctx.on('subagents/finished', ({ run, result }) => {
      if (!children.delete(String(run.sessionId))) return
      const calls = `${result.modelCalls} model call${result.modelCalls === 1 ? '' : 's'}`
      line(`  ↳ ${run.agentType} ${result.status === 'completed' ? 'answered' : result.status}${result.error && result.status !== 'completed' ? ` (${result.error.code})` : ''} · ${calls}`)
    }),
  ]
  return () => {
    for (const dispose of disposers) dispose()
  }
}
