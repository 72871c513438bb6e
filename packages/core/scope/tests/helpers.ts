/** A promise with its resolve exposed, for deterministic ordering instead of sleeps. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((res) => (resolve = res))
  return { promise, resolve }
}

/**
 * Collects errors and lets a test wait until `count` of them have arrived
 * (rejections are reported a microtask or more after the dispatch returns).
 */
export function errorSink() {
  const errors: unknown[] = []
  const waiters: Array<{ count: number; resolve: () => void }> = []
  return {
    errors,
    report: (error: unknown) => {
      errors.push(error)
      for (const waiter of waiters) if (errors.length >= waiter.count) waiter.resolve()
    },
    until(count: number): Promise<void> {
      if (errors.length >= count) return Promise.resolve()
      const { promise, resolve } = deferred()
      waiters.push({ count, resolve })
      return promise
    },
    messages: () => errors.map((error) => (error instanceof Error ? error.message : String(error))),
  }
}
