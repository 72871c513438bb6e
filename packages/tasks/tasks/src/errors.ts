/** The codes of `TasksError`. */
export interface TasksErrorCodeMap {
  /** `start()` was given a spec it cannot run (no owner, an empty kind or title, no `run` function). */
  INVALID_TASK: true
  /** The owner is not a live agent of this app (disposed, or never published), or the starting context is unloading. */
  OWNER_GONE: true
}

export type TasksErrorCode = keyof TasksErrorCodeMap

/** An error of dsh-tasks: a `code` and a message a person can act on. */
export class TasksError extends Error {
  override readonly name = 'TasksError'
  constructor(
    readonly code: TasksErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}
