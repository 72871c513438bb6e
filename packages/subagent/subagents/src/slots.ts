interface Waiter {
  readonly start: () => void
  readonly fail: (reason: unknown) => void
}

interface Line {
  running: number
  readonly waiting: Waiter[]
}

/**
 * Per-parent concurrency (R-SUB-2): at most `limit` children of one parent
 * run at once; the others wait in the order they asked (spawn order, which
 * is the model's order: the loop starts a step's tool bodies in model
 * order). A waiter whose signal aborts leaves the line at once.
 */
export class Slots {
  private readonly lines = new Map<string, Line>()

  constructor(private readonly limit: number) {}

  /** Resolves with the slot's release once `key` has a free slot; rejects with the signal's reason when it aborts first. */
  acquire(key: string, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason)
    const line = this.lines.get(key) ?? { running: 0, waiting: [] }
    this.lines.set(key, line)
    let released = false
    const release = () => {
      if (released) return
      released = true
      line.running--
      const next = line.waiting.shift()
      if (next) next.start()
      else if (line.running === 0) this.lines.delete(key)
    }
    if (line.running < this.limit) {
      line.running++
      return Promise.resolve(release)
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const at = line.waiting.indexOf(waiter)
        if (at >= 0) line.waiting.splice(at, 1)
        reject(signal!.reason)
      }
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', onAbort)
          line.running++
          resolve(release)
        },
        fail: reject,
      }
      line.waiting.push(waiter)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  /** How many children of `key` run, and how many wait. */
  usage(key: string): { running: number; waiting: number } {
    const line = this.lines.get(key)
    return { running: line?.running ?? 0, waiting: line?.waiting.length ?? 0 }
  }
}
