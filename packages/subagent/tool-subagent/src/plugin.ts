import '@deepseek-ai/dsh-subagents'
import '@deepseek-ai/dsh-tasks'
import '@deepseek-ai/dsh-tools'
import { ToolSubagentConfig } from './config'
import { symbols, type Context } from './cordis'
import { taskTool } from './task-tool'
import { taskTools } from './task-tools'

/**
 * The `task` tool (R-SUB-3), registered on `ctx.tools` for every agent
 * (children see it only when their type allows it), plus `task_list`,
 * `task_output` and `task_kill` unless `taskTools: false`. Needs
 * `ctx.subagents` (dsh-subagents) and `ctx.tasks` (dsh-tasks); with no agent
 * type configured it registers no `task` tool. Registrations revert when
 * the plugin (or a service it injects) goes away.
 */
export const ToolSubagent = {
  name: 'dsh-tool-subagent',
  inject: ['tools', 'subagents', 'tasks'],
  Config: ToolSubagentConfig,
  apply(ctx: Context, config: ToolSubagentConfig = {}) {
    const managed = config.taskTools ?? true
    const maxAnswerChars = config.maxAnswerChars ?? 30_000
    if (ctx.subagents.types().length) {
      // The services held without Cordis' tracing proxy: `task` reaches them on every call, and its body
      // never needs a caller's context from them (spawn and type read their own state).
      const host = { tools: ctx.tools, subagents: untraced(ctx.subagents), tasks: ctx.tasks, managed, maxAnswerChars, timeoutMs: config.timeoutMs ?? 0 }
      ctx.tools.register(taskTool(host))
    } else {
      ctx.logger('dsh-tool-subagent').warn('no agent types are configured in dsh-subagents: the task tool is not registered')
    }
    if (managed) for (const tool of taskTools(ctx.tasks, maxAnswerChars)) ctx.tools.register(tool)
  },
}

/** `task_list`, `task_output` and `task_kill` alone, for an app with background tasks (the shell's) but no subagents. */
export const TaskTools = {
  name: 'dsh-task-tools',
  inject: ['tools', 'tasks'],
  apply(ctx: Context) {
    for (const tool of taskTools(ctx.tasks, 30_000)) ctx.tools.register(tool)
  },
}

/** The service object behind Cordis' tracing proxy. */
function untraced<T extends object>(traced: T): T {
  return (traced as T & Record<symbol, T | undefined>)[symbols.original] ?? traced
}
