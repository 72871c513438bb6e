/**
 * The delay before retry number `attempt` (0-based): exponential from
 * `baseDelayMs`, with "equal jitter" (half fixed, half random) so that many
 * clients failing together do not retry in lockstep; a provider's
 * `retryAfterMs` hint raises it; the result never exceeds `maxDelayMs`.
 */
export function backoffDelay(
  attempt: number,
  options: { baseDelayMs: number; maxDelayMs: number; retryAfterMs?: number },
  random: () => number = Math.random,
): number {
  const exponential = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** attempt)
  const jittered = exponential / 2 + random() * (exponential / 2)
  const hinted = options.retryAfterMs !== undefined ? Math.max(jittered, options.retryAfterMs) : jittered
  return Math.round(Math.min(options.maxDelayMs, hinted))
}

/** Resolves `true` after `ms`, or `false` as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false)
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      resolve(false)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
