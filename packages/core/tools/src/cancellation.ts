import { ToolError, isToolError } from './errors'

/** The exact model-visible sentence of a call that never started (R-CAN-4). */
export const ABORTED_BEFORE_DISPATCH_MESSAGE = 'tool call aborted before dispatch'

export function abortedBeforeDispatch(): ToolError {
  return new ToolError('ABORTED_BEFORE_DISPATCH', ABORTED_BEFORE_DISPATCH_MESSAGE)
}

/**
 * Waits for `value` unless `signal` aborts first, in which case it rejects
 * with `ABORTED_BEFORE_DISPATCH` at once. Used for every wait before a body
 * starts (policy listeners, approval, guards): a cancelled turn must not sit
 * behind a slow approval prompt. A late rejection of `value` is swallowed.
 */
export function beforeDispatch<T>(value: T | Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    Promise.resolve(value).catch(() => {})
    return Promise.reject(abortedBeforeDispatch())
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedBeforeDispatch())
    signal.addEventListener('abort', onAbort, { once: true })
    Promise.resolve(value).then(
      (result) => {
        signal.removeEventListener('abort', onAbort)
        resolve(result)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}

/** Whether `value` says "timed out": a `TimeoutError` (as `AbortSignal.timeout` uses) or a `TIMEOUT` tool error. */
export function isTimeout(value: unknown): boolean {
  if (isToolError(value)) return value.code === 'TIMEOUT'
  return typeof value === 'object' && value !== null && (value as { name?: unknown }).name === 'TimeoutError'
}

/**
 * A signal that aborts, with the first reason, when any of `sources` aborts
 * or `abort()` is called: what the body of a call with a deadline or a
 * replaced signal receives.
 *
 * Why not `AbortSignal.any`: on Node 20 it costs about 80 µs a call (its
 * weak-reference bookkeeping), eight times the rest of the pipeline, and every
 * call has a deadline. Plain listeners cost about 4 µs; `dispose()` removes
 * them once the call settles, so a long-lived turn signal does not collect one
 * listener per call.
 */
export class LinkedAbort {
  private readonly controller = new AbortController()
  private readonly onAbort = (event: Event) => this.controller.abort((event.target as AbortSignal).reason)

  constructor(private readonly sources: readonly AbortSignal[]) {
    const aborted = sources.find((source) => source.aborted)
    if (aborted) this.controller.abort(aborted.reason)
    else for (const source of sources) source.addEventListener('abort', this.onAbort, { once: true })
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  abort(reason: unknown): void {
    this.controller.abort(reason)
  }

  /** Stops following the sources (the signal keeps its state). Idempotent. */
  dispose(): void {
    for (const source of this.sources) source.removeEventListener('abort', this.onAbort)
  }
}
