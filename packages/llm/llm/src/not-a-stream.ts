import { LlmError } from './failure'

/**
 * The failure of a model stream's source that is not an `AsyncIterable`. A
 * promise (an adapter whose `stream()` is an `async` function) gets a
 * rejection handler first: nobody else will ever read it, and a rejection
 * nobody handles ends a Node process.
 */
export function notAStream(value: unknown, route: string): LlmError {
  if (value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as PromiseLike<unknown>).then === 'function') {
    ;(value as PromiseLike<unknown>).then(undefined, () => {})
    return new LlmError({
      code: 'UNKNOWN',
      message: `the model stream for ${route} is a promise, not an AsyncIterable: an adapter's stream() returns the stream itself (write it as an async generator, \`async *stream()\`, not an async function)`,
    })
  }
  return new LlmError({ code: 'UNKNOWN', message: `the model stream for ${route} is not an AsyncIterable` })
}
