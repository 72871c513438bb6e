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
  /** Ends the process now (a second Ctrl-C). */
  exit(code: number): never
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
    exit: (code) => process.exit(code),
  }
}
