import { AgentError } from '@deepseek-ai/dsh-agent'

/** The stop cause when the loop (the provider) unloads. */
export const LOOP_UNLOADED = 'the agent loop unloaded'
/** The stop cause when the fiber that called create/resume (the owner) unloads. */
export const OWNER_UNLOADED = 'its owner unloaded'

/**
 * One create/resume call under way, from its start to its publication
 * (R-LIFE-1, R-LIFE-6): the single stop signal of its load, its setup and
 * its publication.
 *
 * Whatever ends the call early (the caller's signal, the owner unloading,
 * the loop unloading, the agent's teardown) calls `stop(cause)`, and the
 * call rejects at once with an `AgentError('ABORTED')` whose message names
 * that cause, whatever it was awaiting: `race` does not wait for the work it
 * races. That work keeps running on its own; its outcome is dropped, so
 * nothing built from it is ever published. Once the call has settled
 * (`settle`), `stop` does nothing.
 */
export class PendingCall {
  private readonly controller = new AbortController()
  private settled = false
  private readonly unlisten: (() => void) | undefined

  constructor(
    /** How the call reads in messages, e.g. `resume("a")`. */
    readonly operation: string,
    signal: AbortSignal | undefined,
  ) {
    if (signal) {
      const onAbort = () => this.stop('its signal aborted', signal.reason)
      signal.addEventListener('abort', onAbort, { once: true })
      this.unlisten = unlistener(signal, onAbort)
    }
  }

  get stopped(): boolean {
    return this.controller.signal.aborted
  }

  /** Stops the call with `cause` (a clause such as "its owner unloaded"), unless it stopped or settled already. */
  stop(cause: string, underlying?: unknown): void {
    if (this.settled || this.controller.signal.aborted) return
    const message = `${this.operation} was aborted before the agent was published: ${cause}`
    this.controller.abort(new AgentError('ABORTED', message, underlying === undefined ? undefined : { cause: underlying }))
  }

  /** Throws the stop error if the call was stopped. */
  check(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason
  }

  /**
   * Runs `work` (a microtask later, and not at all if the call stopped
   * meanwhile) and settles with it, or rejects with the stop error as soon as
   * the call stops. A late outcome of `work` is dropped (a rejection too: it
   * is handled here, never reported as unhandled). `work` receives the call's
   * stop signal, to pass on to what it awaits (a persistence load lets go of
   * its lock at once when it aborts).
   */
  race<T>(work: (signal: AbortSignal) => T | PromiseLike<T>): Promise<T> {
    const signal = this.controller.signal
    return new Promise<T>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason)
      const onStop = () => reject(signal.reason)
      signal.addEventListener('abort', onStop, { once: true })
      Promise.resolve()
        .then(() => {
          this.check()
          return work(signal)
        })
        .then(
          (value) => {
            signal.removeEventListener('abort', onStop)
            resolve(value)
          },
          (error) => {
            signal.removeEventListener('abort', onStop)
            reject(error)
          },
        )
    })
  }

  /** The call is over (published or rolled back): later stops are ignored, the caller's signal is let go. */
  settle(): void {
    this.settled = true
    this.unlisten?.()
  }
}

/**
 * The closure that takes `onAbort` off `signal`, made here and not as a
 * function literal assigned straight to `unlisten`: V8 allocates such a
 * literal in the old generation, and an old closure keeps what its context
 * holds (here the call, its controller and signal) alive through every
 * scavenge until a full GC.
 */
function unlistener(signal: AbortSignal, onAbort: () => void): () => void {
  return () => signal.removeEventListener('abort', onAbort)
}
