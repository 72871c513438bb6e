import { spawn as spawnPty, type IPty } from '@lydell/node-pty'
import { Terminal } from '@xterm/headless'
import { afterAll } from 'vitest'
import { bin } from './helpers'

const running: IPty[] = []
afterAll(() => {
  for (const pty of running) {
    try {
      pty.kill('SIGKILL')
    } catch {
      // Already gone.
    }
  }
})

/** A `dsh-demo` in a pseudo-terminal, its screen kept by a headless xterm. */
export interface PtyDemo {
  /** The whole screen (scrollback included), each line's trailing spaces and the trailing blank lines dropped. */
  screen(): Promise<string[]>
  /** Resolves once the screen (as `screen()` gives it, joined by newlines) matches `pattern` `times` times; rejects when the process exits first. */
  waitFor(pattern: RegExp, times?: number): Promise<void>
  /** Everything the process wrote, escape sequences included. */
  raw(): string
  /** Types `text` (`\r` is Enter, `\x03` Ctrl-C, `\x1b[A` Up). */
  type(text: string): void
  /** Closes the terminal (its master side), as closing a terminal window does: the process gets SIGHUP, and its terminal is gone. */
  hangUp(): void
  /** Resolves with the exit status, or the signal's name. */
  readonly exited: Promise<number | string>
}

const SIGNAL_NAMES: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 9: 'SIGKILL', 15: 'SIGTERM' }

/** How long `waitFor` waits at most (the machine may be loaded: this is a ceiling, never a duration asserted). */
const WAIT_CEILING_MS = 150_000

/** The keys a test types. */
export const KEY = { enter: '\r', ctrlC: '\x03', ctrlD: '\x04', up: '\x1b[A', down: '\x1b[B', altEnter: '\x1b\r', pasteStart: '\x1b[200~', pasteEnd: '\x1b[201~' } as const

/** Starts `dsh-demo args` in a `columns` × `rows` pseudo-terminal in `cwd` (no API keys inherited). */
export function startPty(args: readonly string[], options: { cwd: string; env?: Record<string, string>; columns?: number; rows?: number }): PtyDemo {
  const columns = options.columns ?? 100
  const rows = options.rows ?? 40
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value
  for (const key of ['DEEPSEEK_API_KEY', 'OPENAI_API_KEY', 'FORCE_COLOR', 'NO_COLOR']) delete env[key]
  Object.assign(env, { TERM: 'xterm-256color' }, options.env)
  const term = new Terminal({ cols: columns, rows, scrollback: 5000, allowProposedApi: true })
  const pty = spawnPty(process.execPath, [bin, ...args], { name: env.TERM!, cols: columns, rows, cwd: options.cwd, env })
  running.push(pty)
  const waiters = new Set<() => void>()
  let written = Promise.resolve()
  let exited = false
  let raw = ''
  const text = () => {
    const buffer = term.buffer.active
    const lines: string[] = []
    for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)!.translateToString(true))
    while (lines.length && lines.at(-1) === '') lines.pop()
    return lines
  }
  pty.onData((data) => {
    raw += data
    written = written.then(() => new Promise<void>((resolve) => term.write(data, resolve)))
    void written.then(() => {
      for (const check of waiters) check()
    })
  })
  const status = new Promise<number | string>((resolve) => {
    pty.onExit(({ exitCode, signal }) => {
      exited = true
      // The last output may still be on its way into the terminal.
      void written.then(() => {
        for (const check of waiters) check()
        resolve(signal ? (SIGNAL_NAMES[signal] ?? `signal ${signal}`) : exitCode)
      })
    })
  })
  return {
    async screen() {
      await written
      return text()
    },
    waitFor(pattern, times = 1) {
      return new Promise((resolve, reject) => {
        const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`)
        const check = () => {
          const screen = text().join('\n')
          if ((screen.match(global)?.length ?? 0) >= times) {
            waiters.delete(check)
            return resolve()
          }
          if (exited) {
            waiters.delete(check)
            reject(new Error(`dsh-demo exited before the screen matched ${pattern} ×${times}; the screen:\n${screen}`))
          }
        }
        waiters.add(check)
        check()
        // A generous ceiling, so that a screen that never comes fails with what it shows instead of the test's timeout.
        setTimeout(() => {
          if (!waiters.delete(check)) return
          reject(new Error(`the screen did not match ${pattern} ×${times} within ${WAIT_CEILING_MS} ms; it shows:\n${text().join('\n')}`))
        }, WAIT_CEILING_MS).unref()
      })
    },
    raw: () => raw,
    type: (keys) => pty.write(keys),
    // node-pty's Unix terminal has destroy() (close the master, then SIGHUP), which its typings leave out.
    hangUp: () => (pty as IPty & { destroy(): void }).destroy(),
    exited: status,
  }
}
