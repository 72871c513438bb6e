/** A promise whose `resolve` and `reject` the test holds. */
export interface Deferred<T> {
  readonly promise: Promise<T>
  resolve(value: T): void
  reject(error: unknown): void
}

/**
 * A promise with its resolve/reject exposed: the way a test orders a race
 * deterministically (a tool body, a flush or a stream waits on it until the test
 * says so), instead of sleeping.
 */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}
