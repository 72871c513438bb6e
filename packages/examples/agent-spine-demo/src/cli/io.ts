import { EXIT_GRACE_MS, type StopSignal } from './exit-guard'

export type { StopSignal } from './exit-guard'

/**
 * How a run ends: an exit status, or the stop signal the process re-raises
 * once the run has closed down (so that its parent sees it killed by that
 * signal, as with any well-behaved program).
 */
export type RunStatus = number | StopSignal

/** The process surface the command line uses, so that tests and embedders can drive it. */
export interface CliIo {
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean }
  readonly stdout: { write(text: string): unknown; isTTY?: boolean }
  readonly stderr: { write(text: string): unknown; isTTY?: boolean }
  readonly env: NodeJS.ProcessEnv
  /** The directory relative flags and the default workspace resolve against. */
  readonly cwd: string
  /** Calls `handler` on each SIGINT until the returned function is called. */
  onInterrupt(handler: () => void): () => void
  /**
   * Calls `handler` on each SIGTERM and SIGHUP until the returned function is
   * called. Before a SIGHUP reaches `handler`, output to the terminal that went
   * away is dropped (writing to it could only fail).
   */
  onStop(handler: (signal: StopSignal) => void): () => void
  /**
   * The terminal is gone (its input ended or failed, which a keyboard never
   * does): output to it is dropped from now on, as after SIGHUP.
   */
  hangUp(): void
  /**
   * Ends the process at once by `signal` (default SIGINT: interrupted, status 130 to a shell),
   * waiting on nothing that can block: not on the agent, the log, the output
   * streams, nor on `process.exit` (which joins the threads of file
   * operations, and one stuck in a blocking read never returns). The last
   * resort of an exit the person asked for; see `exit-guard.ts`.
   */
  abort(signal?: NodeJS.Signals): never
}

/**
 * The real process. A reader that goes away (`dsh-demo -p … | head`) does not
 * crash the run: the broken pipe is ignored (later writes are dropped) and the
 * session is still saved.
 */
export function processIo(): CliIo {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      // EIO: a terminal that was closed (SIGHUP follows).
      if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED' && error.code !== 'EIO') throw error
    })
  }
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    onInterrupt(handler) {
      process.on('SIGINT', handler)
      return () => void process.off('SIGINT', handler)
    },
    onStop(handler) {
      const listener = (signal: NodeJS.Signals) => {
        if (signal === 'SIGHUP') hangUp()
        handler(signal as StopSignal)
      }
      process.on('SIGTERM', listener)
      process.on('SIGHUP', listener)
      return () => {
        process.off('SIGTERM', listener)
        process.off('SIGHUP', listener)
      }
    },
    hangUp,
    abort: abortProcess,
  }
}

/**
 * The terminal is gone (SIGHUP): the output streams that were writing to it
 * are destroyed, so that what is still printed while closing down is dropped
 * at once (Node neither writes it nor waits for it). Output redirected to a
 * file or a pipe is kept.
 */
function hangUp(): void {
  for (const stream of [process.stdout, process.stderr]) if (stream.isTTY) stream.destroy()
}

/** The signals whose listeners an abort drops, so that the one re-raised takes its default action. */
const HANDLED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/**
 * Ends this process by `signal` (SIGINT unless said otherwise) with the
 * signal's default action: the way a program interrupted by Ctrl-C, or
 * stopped by SIGTERM or SIGHUP, should end (its parent, a shell or a script,
 * then knows why), and the one way out that does not run Node's exit, which
 * waits for stuck file operations. A terminal left in raw mode by readline is
 * restored first (a synchronous ioctl; skipped when the terminal is gone).
 */
export function abortProcess(signal: NodeJS.Signals = 'SIGINT'): never {
  const stdin = process.stdin as NodeJS.ReadStream
  try {
    if (stdin.isTTY && stdin.isRaw) stdin.setRawMode(false)
  } catch {
    // The terminal was closed (EIO): there is no mode left to restore.
  }
  // With no listener left, Node restores the default action (terminate) at once.
  for (const name of HANDLED_SIGNALS) process.removeAllListeners(name)
  process.kill(process.pid, signal)
  // A signal sent to oneself is delivered before kill() returns; this is only reached if it was not.
  process.kill(process.pid, 'SIGKILL')
  throw new Error('unreachable: the process was killed')
}

/**
 * Ends the process with `code` once the output is written. `process.exit`
 * waits for every file operation in flight, and one a tool left stuck in the
 * kernel (a blocking read) never finishes: then Node could not be stopped,
 * not even by Ctrl-C (its handlers no longer run). So the exit waits for
 * such operations itself, with Ctrl-C ending the process at once
 * (`abortProcess`): most are short (a cache write) and finish in a moment.
 * After an interrupt (`code` 130) it waits at most `graceMs`; otherwise it
 * says, after `graceMs`, what it is waiting for.
 */
export function exitProcess(code: number, graceMs = EXIT_GRACE_MS): void {
  process.removeAllListeners('SIGINT')
  process.on('SIGINT', () => abortProcess())
  const since = Date.now()
  let told = false
  const leave = () => {
    if (pendingFileOperations() === 0) return process.exit(code)
    const late = Date.now() - since >= graceMs
    if (late && code === 130) return abortProcess()
    if (late && !told) {
      told = true
      process.stderr.write('dsh-demo: waiting for a file operation a tool left unfinished (press Ctrl-C to stop it)\n')
    }
    setTimeout(leave, 20)
  }
  process.stdout.write('', () => process.stderr.write('', leave))
}

/** File operations Node still waits for (threads of the libuv pool). */
function pendingFileOperations(): number {
  return process.getActiveResourcesInfo().filter((name) => name.startsWith('FSReq')).length
}

/**
 * Ends the process by `signal` once the run it stopped has closed down:
 * after the output is written (a stop signal's own default action would
 * drop what is still buffered), except after SIGHUP, whose terminal is gone
 * (nothing is waited for). A signal meanwhile ends it at once.
 */
export function exitBySignal(signal: StopSignal): void {
  if (signal === 'SIGHUP') return void abortProcess(signal)
  for (const name of HANDLED_SIGNALS) {
    process.removeAllListeners(name)
    process.on(name, () => abortProcess(signal))
  }
  process.stdout.write('', () => process.stderr.write('', () => abortProcess(signal)))
}
