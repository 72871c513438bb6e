import type { Agent } from '@deepseek-ai/dsh-agent'

/**
 * Where a task is: `running` until its work settles, then one of the three
 * endings. `interrupted` is never a live status: it is how a task that
 * started in an earlier process (or before its owner was closed) and never
 * reported its outcome is delivered after a resume.
 */
export type TaskStatus = 'running' | 'completed' | 'failed' | 'cancelled'

/** How a task ended, as its owner is told (`interrupted`: see `TaskStatus`). */
export type TaskEnding = Exclude<TaskStatus, 'running'> | 'interrupted'

/**
 * Who or what stopped a task, which decides how its owner hears of it:
 *
 * - `person`: a person stopped it (the CLI's `/tasks stop`, an app calling
 *   `cancel()`): reported to the owner's model without starting a turn.
 * - `model`: the owner's model stopped it (`task_kill`): the tool's result
 *   is the report, nothing else is sent.
 * - `owner-cancelled`: the owner was cancelled with cause `parent`; reported
 *   without starting a turn.
 * - `owner-disposed`: the owner went away; nobody is told now (a resume of
 *   the owner's session reports the task as interrupted).
 * - `unloaded`: the plugin (context) that started the task unloaded;
 *   reported without starting a turn.
 */
export type TaskStopCause = 'person' | 'model' | 'owner-cancelled' | 'owner-disposed' | 'unloaded'

/** What a task's work can do while it runs. */
export interface TaskControl {
  /** The task's id. */
  readonly id: string
  /**
   * Reports progress (a short line for UIs, e.g. `ran grep`): announced as
   * `tasks/progress`, never sent to the model.
   */
  progress(note: string): void
}

/** What `ctx.tasks.start()` is given. */
export interface TaskSpec {
  /** The agent the task belongs to: its model is told the outcome, and the task ends when it goes. */
  readonly owner: Agent
  /** What produced the task, in one word (`shell`, `subagent`): shown to the model and in lists. */
  readonly kind: string
  /** A one-line title (the command, the subagent's description): shown to the model and in lists. */
  readonly title: string
  /** The tool call that started it, if one did: logged in `task/started`. */
  readonly callId?: string
  /**
   * The work. It resolves with the text the owner's model reads when the
   * task completes, or rejects (the task failed: the error's message is
   * reported). It must stop promptly when `signal` aborts (a stop); what
   * it settles with then is kept as the output of the cancelled task.
   */
  run(signal: AbortSignal, control: TaskControl): Promise<string> | string
  /**
   * The output so far, for `task_output` and UIs while the task runs (a
   * shell's buffered output, a subagent's latest text). Cheap and
   * side-effect free; absent, the output is empty until the task ends.
   */
  output?(): string
}

/** How a task ended. */
export interface TaskResult {
  readonly id: string
  readonly status: Exclude<TaskStatus, 'running'>
  /** What the work resolved with (completed), or the output so far (failed, cancelled). */
  readonly output: string
  /** Why it failed. */
  readonly error?: { readonly code: string; readonly message: string }
  /** Who stopped it (cancelled). */
  readonly stoppedBy?: TaskStopCause
}

/**
 * A task: a handle to background work owned by an agent. Live fields
 * (`status`, `output()`) change as it runs; a finished task stays listed
 * (up to `keepFinished` per owner) until its owner is disposed.
 */
export interface TaskHandle {
  readonly id: string
  readonly kind: string
  readonly title: string
  readonly owner: Agent
  readonly callId: string | undefined
  /** `Date.now()` when it started, and when it ended. */
  readonly startedAt: number
  readonly endedAt: number | undefined
  readonly status: TaskStatus
  /** Set once a stop was asked for (the work may still be winding down). */
  readonly stopRequested: TaskStopCause | undefined
  /** The output so far (the spec's `output()`), or the final output once it ended. */
  output(): string
  /** Settles when the work has settled; never rejects. */
  result(): Promise<TaskResult>
  /**
   * Asks the work to stop (its signal aborts). Returns false when the task
   * had ended already or a stop was asked before. Default cause `person`.
   */
  cancel(options?: { by?: TaskStopCause }): boolean
}

/** What every `tasks/*` Cordis event carries. */
export interface TaskEvent {
  readonly task: TaskHandle
}

/** `tasks/progress`: a note from the work. */
export interface TaskProgressEvent extends TaskEvent {
  readonly note: string
}

/** `tasks/finished`, `tasks/failed`, `tasks/cancelled`: how it ended. */
export interface TaskEndEvent extends TaskEvent {
  readonly result: TaskResult
}
