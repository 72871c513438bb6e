/**
 * The signals that ask the command line to stop: SIGTERM (`kill`, a container
 * stop, systemd) and SIGHUP (the terminal was closed). Either closes the run
 * down as an exit would (the open turn cancelled and ended in the log, the log
 * flushed, the session released), then ends the process by the same signal.
 */
export type StopSignal = 'SIGTERM' | 'SIGHUP'

/**
 * How long an exit the person asked for (a second Ctrl-C) may spend closing
 * down: cancelling the turn, draining the agent, flushing the log. A close
 * normally takes milliseconds; it can only take longer when something hangs
 * (a tool that ignores its abort signal, a file operation stuck in the
 * kernel), and then the process ends without it.
 */
export const EXIT_GRACE_MS = 3000

/**
 * The Ctrl-C ladder's last rungs. `close(work)` runs the graceful close of an
 * exit; the process is ended with `abort` (see `CliIo.abort`) when the close
 * has made no progress for `graceMs` (each `progress()` call, e.g. an event
 * appended to the log or a step of the close done, restarts the wait, so a
 * slow machine is not mistaken for a hang), or at once when `force()` is
 * called (the next Ctrl-C). Nothing here waits on the agent, the log or the
 * streams: the timer and the signal handler only need the event loop to turn.
 */
export class ExitGuard {
  private closing = false
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly abort: () => never,
    private readonly graceMs = EXIT_GRACE_MS,
  ) {}

  /** Whether an exit's close has started. */
  get started(): boolean {
    return this.closing
  }

  /**
   * Runs `work` as the exit's close (once) and settles with it, unless the
   * process is aborted first. The deadline stays armed after `work` settles:
   * it also covers what follows on the way out (the last writes to stdout
   * and stderr, `process.exit`).
   */
  async close(work: () => Promise<void>): Promise<void> {
    if (this.closing) return
    this.closing = true
    this.arm()
    await work()
  }

  /** The close moved on: the wait starts again. No effect before `close()`. */
  progress(): void {
    if (this.closing) this.arm()
  }

  private arm(): void {
    clearTimeout(this.timer)
    this.timer = setTimeout(() => this.abort(), this.graceMs)
  }

  /** Ends the process now. */
  force(): never {
    return this.abort()
  }
}

/**
 * Bounds a close already under way by `guard` (a signal came while it ran),
 * without awaiting it: its failure is reported where the close is awaited,
 * and must not become an unhandled rejection here (which ends the process).
 */
export function bound(guard: ExitGuard, closing: Promise<void>): void {
  guard.close(() => closing).catch(() => undefined)
}

/**
 * Whether `signal` is a run's first stop signal (`current`: the one taken
 * before, if any): the caller then records it and starts the close. A
 * repeated SIGHUP is the same hangup (the kernel and the shell that ran us
 * each send one when a terminal closes): not first, nothing to do. Any other
 * signal after the first, or once an exit's close has begun, ends the
 * process at once by that signal (`abort`).
 */
export function firstStop(current: StopSignal | undefined, signal: StopSignal, guard: ExitGuard, abort: (signal: StopSignal) => never): boolean {
  if (current === 'SIGHUP' && signal === 'SIGHUP') return false
  if (current !== undefined || guard.started) abort(signal)
  return true
}
