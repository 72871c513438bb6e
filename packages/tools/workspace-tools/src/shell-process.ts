import { spawn } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import { OutputBuffer } from './output-buffer'

/** One command to run: the argument vector (the shell, possibly inside bwrap) and its bounds. */
export interface ShellRun {
  readonly argv: readonly string[]
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  readonly timeoutMs: number
  readonly killGraceMs: number
  readonly maxOutputBytes: number
  readonly signal: AbortSignal
  /** Where the output goes (default: a new buffer of `maxOutputBytes`); pass one to read it while the command runs. */
  readonly output?: OutputBuffer
  /**
   * `argv` runs the shell inside bubblewrap, in its own PID namespace. What
   * the command leaves running then dies with that namespace, which
   * bubblewrap tears down as it reports the shell's exit, and bubblewrap's
   * own init (pid 1 there, a member of the group) outlives the shell by a
   * moment of its own: counting live members after the exit would only
   * measure how fast the kernel got there. So a sandboxed run never reports
   * `leftovers`; the group is still killed.
   */
  readonly sandboxed?: boolean
}

/** How a command ended. */
export interface ShellOutcome {
  /** stdout and stderr together in arrival order, bounded (head and tail), ANSI escapes removed. */
  readonly output: string
  /** Every byte printed, including what the bound cut. */
  readonly outputBytes: number
  /** The exit code, or null when a signal ended the shell. */
  readonly exitCode: number | null
  readonly exitSignal: NodeJS.Signals | null
  /** Why the command was stopped, if it was: its timeout, or the call's signal. */
  readonly stopped?: 'timeout' | 'cancel'
  /** Processes of the command were still running after the shell exited; they were killed. Always false for a `sandboxed` run. */
  readonly leftovers: boolean
}

/** How long the pipes may stay open after the shell exited (held by a process that left the group) before they are closed. */
const DRAIN_MS = 1_000

/**
 * Runs a command in its own process group (`detached`: `setsid`) and
 * resolves how it ended; it never rejects for the command's sake (a shell
 * that cannot start rejects).
 *
 * Stopping is for the whole group: on timeout or abort, SIGTERM to the
 * group, then SIGKILL after `killGraceMs` if the shell has not exited; once
 * the shell exits, whatever is left of its group (background jobs, children
 * that ignored SIGTERM) is killed at once. A process that left the group
 * (its own `setsid`) escapes this outside the sandbox; inside bubblewrap the
 * command's PID namespace dies with it, so nothing escapes there.
 */
export function runShell(run: ShellRun): Promise<ShellOutcome> {
  return new Promise((resolve, reject) => {
    const output = run.output ?? new OutputBuffer(run.maxOutputBytes)
    const child = spawn(run.argv[0]!, run.argv.slice(1), {
      cwd: run.cwd,
      env: run.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let stopped: 'timeout' | 'cancel' | undefined
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined
    let leftovers = false
    let done = false
    let settling: Promise<void> = Promise.resolve()
    let graceTimer: ReturnType<typeof setTimeout> | undefined
    let drainTimer: ReturnType<typeof setTimeout> | undefined
    const group = child.pid

    const killGroup = (signal: NodeJS.Signals): void => {
      if (group === undefined) return
      try {
        process.kill(-group, signal)
      } catch {
        // ESRCH: the group is gone already.
      }
    }
    const stop = (why: 'timeout' | 'cancel'): void => {
      if (stopped || exited) return
      stopped = why
      killGroup('SIGTERM')
      graceTimer = setTimeout(() => killGroup('SIGKILL'), run.killGraceMs)
    }
    const onAbort = () => stop('cancel')
    const timeout = setTimeout(() => stop('timeout'), run.timeoutMs)
    const finish = (): void => {
      if (done) return
      done = true
      clearTimeout(timeout)
      clearTimeout(graceTimer)
      clearTimeout(drainTimer)
      run.signal.removeEventListener('abort', onAbort)
      void settling.then(() => resolve({
        output: output.text(),
        outputBytes: output.total,
        exitCode: exited?.code ?? null,
        exitSignal: exited?.signal ?? null,
        ...(stopped ? { stopped } : {}),
        leftovers,
      }))
    }

    child.stdout.on('data', (chunk: Buffer) => output.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk))
    child.on('error', (error) => {
      if (done) return
      done = true
      clearTimeout(timeout)
      run.signal.removeEventListener('abort', onAbort)
      reject(error)
    })
    child.on('exit', (code, signal) => {
      exited = { code, signal }
      clearTimeout(timeout)
      clearTimeout(graceTimer)
      // Whatever is left of the group goes now; the note about it needs a live (not zombie) member,
      // and is not given for a sandboxed run (see ShellRun.sandboxed).
      settling = group === undefined ? settling : (run.sandboxed ? Promise.resolve(false) : liveMembers(group)).then((live) => {
        if (live && !stopped) leftovers = true
        killGroup('SIGKILL')
      })
      drainTimer = setTimeout(() => {
        child.stdout.destroy()
        child.stderr.destroy()
        finish()
      }, DRAIN_MS)
    })
    child.on('close', finish)
    if (run.signal.aborted) stop('cancel')
    else run.signal.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * Whether process group `group` has a member that is not a zombie. A zombie
 * is a process that already ended and waits to be reaped (by init, for the
 * processes of a sandbox whose parent went first): it counts for
 * `kill(-group, 0)` but runs nothing. Reads `/proc`; without it, falls back
 * to the signal probe.
 */
async function liveMembers(group: number): Promise<boolean> {
  let entries: string[]
  try {
    entries = await readdir('/proc')
  } catch {
    try {
      process.kill(-group, 0)
      return true
    } catch {
      return false
    }
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    let stat: string
    try {
      stat = await readFile(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue // Gone while we looked.
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so fields are counted from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) === group && fields[0] !== 'Z') return true
  }
  return false
}
