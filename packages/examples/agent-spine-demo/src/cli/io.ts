import { EXIT_GRACE_MS } from './exit-guard'

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
   * Ends the process at once, as interrupted (status 130 to a shell),
   * waiting on nothing that can block: not on the agent, the log, the output
   * streams, nor on `process.exit` (which joins the threads of file
   * operations, and one stuck in a blocking read never returns). The last
   * resort of an exit the person asked for; see `exit-guard.ts`.
   */
  abort(): never
}

/**
 * The real process. A reader that goes away (`dsh-demo -p … | head`) does not
 * crash the run: the broken pipe is ignored (later writes are dropped) and the
 * session is still saved.
 */
export function processIo(): CliIo {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error
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
    abort: abortProcess,
  }
}

/**
 * Ends this process by SIGINT with the signal's default action: the way a
 * program interrupted by Ctrl-C should end (its parent, a shell or a script,
 * then knows it was interrupted), and the one way out that does not run
 * Node's exit, which waits for stuck file operations. A terminal left in raw
 * mode by readline is restored first (a synchronous ioctl).
 */
export function abortProcess(): never {
  const stdin = process.stdin as NodeJS.ReadStream
  if (stdin.isTTY && stdin.isRaw) stdin.setRawMode(false)
  // With no listener left, Node restores the default action (terminate) at once.
  process.removeAllListeners('SIGINT')
  process.kill(process.pid, 'SIGINT')
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
  process.on('SIGINT', abortProcess)
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
