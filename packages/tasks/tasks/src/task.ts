import type { Agent } from '@deepseek-ai/dsh-agent'
import type { TaskControl, TaskHandle, TaskResult, TaskSpec, TaskStatus, TaskStopCause } from './types'

/** What a task tells the service that runs it. */
export interface TaskHooks {
  progress(task: Task, note: string): void
  /** The work settled; called once, in completion order. */
  ended(task: Task, result: TaskResult): void
}

/** The reason a stopped task's signal aborts with. */
export class TaskStoppedError extends Error {
  override readonly name = 'AbortError'
  readonly code = 'TASK_STOPPED'
  constructor(readonly by: TaskStopCause) {
    super(`the task was stopped (${by})`)
  }
}

/**
 * One background task: its state and its work. The work starts with
 * `begin()`; when it settles the task records how it ended and calls
 * `hooks.ended` once. A stop aborts the work's signal; the task ends when
 * the work settles (a work that ignores its signal keeps the task running).
 */
export class Task implements TaskHandle {
  readonly kind: string
  readonly title: string
  readonly owner: Agent
  readonly callId: string | undefined
  readonly startedAt = Date.now()
  endedAt: number | undefined
  status: TaskStatus = 'running'
  stopRequested: TaskStopCause | undefined
  private final: TaskResult | undefined
  /** Made with the task, so `result()` works from the first moment (a `tasks/started` listener calls it before `begin()`). */
  private readonly settled: Promise<TaskResult>
  private settle!: (result: TaskResult) => void
  private readonly controller = new AbortController()

  constructor(
    readonly id: string,
    private readonly spec: TaskSpec,
    private readonly hooks: TaskHooks,
  ) {
    this.kind = spec.kind
    this.title = spec.title
    this.owner = spec.owner
    this.callId = spec.callId
    this.settled = new Promise((resolve) => (this.settle = resolve))
  }

  /**
   * Starts the work (once). A task stopped before this (by a `tasks/started`
   * listener) never runs its work: it ends as stopped, with no output.
   */
  begin(): void {
    const control: TaskControl = { id: this.id, progress: (note) => this.hooks.progress(this, String(note)) }
    void (async () => {
      let result: TaskResult
      try {
        if (this.stopRequested) {
          // Still settled asynchronously, as a work's end is: start() returns the handle first.
          await undefined
          result = this.stopped('')
        } else {
          const output = await this.spec.run(this.controller.signal, control)
          if (typeof output !== 'string') throw new TypeError(`the task's work resolved with ${typeof output}, not the text of its output`)
          result = this.stopRequested ? this.stopped(output) : { id: this.id, status: 'completed', output }
        }
      } catch (error) {
        result = this.stopRequested ? this.stopped(this.peek()) : { id: this.id, status: 'failed', output: this.peek(), error: failureOf(error) }
      }
      this.final = result
      this.status = result.status
      this.endedAt = Date.now()
      try {
        this.hooks.ended(this, result)
      } finally {
        this.settle(result)
      }
    })()
  }

  output(): string {
    return this.final ? this.final.output : this.peek()
  }

  result(): Promise<TaskResult> {
    return this.settled
  }

  cancel(options: { by?: TaskStopCause } = {}): boolean {
    if (this.status !== 'running' || this.stopRequested) return false
    const by = options.by ?? 'person'
    this.stopRequested = by
    this.controller.abort(new TaskStoppedError(by))
    return true
  }

  private stopped(output: string): TaskResult {
    return { id: this.id, status: 'cancelled', output, stoppedBy: this.stopRequested! }
  }

  /** The spec's output so far; a throwing `output()` counts as none. */
  private peek(): string {
    try {
      const output = this.spec.output?.()
      return typeof output === 'string' ? output : ''
    } catch {
      return ''
    }
  }
}

function failureOf(error: unknown): { code: string; message: string } {
  const code = (error as { code?: unknown } | null)?.code
  const message = error instanceof Error ? error.message : String(error)
  return { code: typeof code === 'string' && code !== '' ? code : 'TASK_FAILED', message: message || 'the task failed' }
}
