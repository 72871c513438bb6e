import Schema from 'schemastery'

/** dsh-tool-subagent's config. */
export interface ToolSubagentConfig {
  /** Also register `task_list`, `task_output` and `task_kill` (the `TaskTools` plugin). Default true. */
  taskTools?: boolean
  /** The most characters of a child's answer a `task` result carries (beginning and end kept). Default 30,000. */
  maxAnswerChars?: number
  /** A foreground `task` call's deadline in ms; 0 (the default) means none: the parent's cancel stops the child. */
  timeoutMs?: number
}

export const ToolSubagentConfig: Schema<ToolSubagentConfig> = Schema.object({
  taskTools: Schema.boolean().default(true).description('Also register task_list, task_output and task_kill.'),
  maxAnswerChars: Schema.natural().min(200).default(30_000).description("The most characters of a child's answer a task result carries."),
  timeoutMs: Schema.natural().default(0).description("A foreground task call's deadline in ms (0: none)."),
})
