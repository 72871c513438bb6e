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
