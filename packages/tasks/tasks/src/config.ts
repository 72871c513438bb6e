import Schema from 'schemastery'

/** dsh-tasks' config. */
export interface TasksConfig {
  /**
   * The most characters of a task's output that one delivery carries; a
   * longer output keeps its beginning and its end around a note saying how
   * much was cut. Default 30,000 (about 7,500 tokens).
   */
  maxOutputChars?: number
  /** Finished tasks kept per owner for `list()`, `get()` and `task_output` (the oldest go first). Default 50. */
  keepFinished?: number
}

export const TasksConfig: Schema<TasksConfig> = Schema.object({
  maxOutputChars: Schema.natural().min(200).default(30_000).description("The most characters of a task's output one delivery carries (head and tail kept)."),
  keepFinished: Schema.natural().default(50).description('Finished tasks kept per owner for list(), get() and task_output.'),
})
