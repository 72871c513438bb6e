/**
 * Serializes the operations on one session id (`load`, `delete`, `release`)
 * so that they never interleave on its file, and lets an abandoned one go at
 * once.
 *
 * `run(id, task, signal)` starts `task` once every earlier task of `id` has
 * finished or let go. The task receives `letGo`: calling it ends its turn
 * early (the next task of the id may start while it winds down; it must not
 * touch the file any more). With a `signal`, the returned promise rejects
 * with the signal's reason as soon as it aborts, whatever the task is doing;
 * a task still waiting for its turn is skipped (its turn passes at once), and
 * one under way decides itself when to let go. A late outcome of the task is
 * dropped (never reported as unhandled).
 */
export class PerIdQueue {
  /** The turn of the last task queued for each id: settles when that task has finished or let go. */
  private readonly tails = new Map<string, Promise<void>>()

  /** The turn of the last task queued for `id`, if one is pending (for operations that only wait). */
  pending(id: string): Promise<void> | undefined {
    return this.tails.get(id)
  }

  run<T>(id: string, task: (letGo: () => void) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const previous = this.tails.get(id) ?? Promise.resolve()
    let letGo!: () => void
    const turn = new Promise<void>((resolve) => (letGo = resolve))
    this.tails.set(id, turn)
    void turn.then(() => {
      if (this.tails.get(id) === turn) this.tails.delete(id)
    })
    const run = previous.then(() => {
      signal?.throwIfAborted()
      return task(letGo)
    })
    void run.then(letGo, letGo)
    return signal === undefined ? run : abortable(run, signal)
  }
}

/** `work`, or the signal's reason as soon as it aborts; a late outcome of `work` is dropped. */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {})
    return Promise.reject(signal.reason)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
