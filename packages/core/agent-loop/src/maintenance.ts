import { AsyncLocalStorage } from 'node:async_hooks'
import { AgentError, initiator } from '@deepseek-ai/dsh-agent'

/** The maintenance task whose code is running (an async context of its own per task). */
const runningTask = new AsyncLocalStorage<MaintenanceTask>()

/** A task handed to `runMaintenance`, with its caller's promise. */
interface MaintenanceTask {
  run: (signal: AbortSignal) => Promise<unknown>
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/**
 * An agent's maintenance queue (`Agent.runMaintenance`). The drain runs the
 * tasks one at a time, each between turns and exclusive with them: no turn
 * opens while one runs (the drain awaits it), and an injection with no open
 * turn waits for it (`running`). Each task gets its own signal, which the
 * agent's failure or teardown aborts; tasks still queued then are rejected
 * and never run. A task's outcome, value or throw, goes to its caller's
 * promise only: it never fails the agent or the drain.
 */
export class MaintenanceQueue {
  private readonly queue: MaintenanceTask[] = []
  /** The running task's controller: set exactly while a task runs. */
  private controller: AbortController | undefined
  /** The running task, while it runs. */
  private current: MaintenanceTask | undefined

  /** Whether a task waits to run. */
  get pending(): boolean {
    return this.queue.length > 0
  }

  /** Whether a task is running. */
  get running(): boolean {
    return this.controller !== undefined
  }

  /**
   * Whether the calling code runs inside the task that is running now (its
   * own async context): a task it queued would wait for that task, which
   * waits for it.
   */
  get calledFromRunning(): boolean {
    return this.current !== undefined && runningTask.getStore() === this.current
  }

  /**
   * The `WOULD_DEADLOCK` refusal of a `runMaintenance()` call of `agent` (named `id`) that would wait
   * for itself: made from inside one of its turns (`hasOpenTurn` and the turn is the caller's
   * initiator), or from inside its running task; `undefined` otherwise.
   */
  deadlock(agent: object, id: string, hasOpenTurn: boolean): AgentError | undefined {
    if (hasOpenTurn && initiator() === agent) {
      return new AgentError('WOULD_DEADLOCK', `runMaintenance() was called from inside a turn of agent ${id}: it would wait for that turn, which waits for it`)
    }
    if (this.calledFromRunning) {
      return new AgentError(
        'WOULD_DEADLOCK',
        `runMaintenance() was called from inside a maintenance task of agent ${id}: it would wait for that task, which waits for it (do the work in the task itself)`,
      )
    }
    return undefined
  }

  /** Queues `task`; the promise settles with its outcome. The caller then wakes the drain. */
  enqueue<T>(task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run: task, resolve: resolve as (value: unknown) => void, reject })
    })
  }

  /** Takes the next task out of the queue (before it runs: a drain round that runs it cannot repeat it). */
  next(): MaintenanceTask | undefined {
    return this.queue.shift()
  }

  /**
   * Runs `task` with its own signal and settles its caller's promise; never
   * throws. `settled` runs once the task no longer counts as running (before
   * the returned promise resolves).
   */
  async run(task: MaintenanceTask, settled: () => void): Promise<void> {
    const controller = new AbortController()
    this.controller = controller
    this.current = task
    try {
      // Run in the task's own async context, so that `calledFromRunning` recognises the task's code.
      task.resolve(await runningTask.run(task, task.run, controller.signal))
    } catch (error) {
      task.reject(error)
    } finally {
      this.controller = undefined
      this.current = undefined
      settled()
    }
  }

  /** Aborts the running task's signal with `reason`. */
  abortRunning(reason: Error): void {
    this.controller?.abort(reason)
  }

  /** Rejects every queued task (each with a fresh error, keeping its caller's stack apart); they never run. */
  rejectQueued(error: () => Error | undefined): void {
    for (const task of this.queue.splice(0)) task.reject(error())
  }
}
