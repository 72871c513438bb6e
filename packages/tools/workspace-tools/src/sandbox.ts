import { spawn } from 'node:child_process'
import { access, constants } from 'node:fs/promises'
import { delimiter, join } from 'node:path'
import type { ShellConfig } from './config'

/**
 * How `shell` commands run on this machine, decided once when the plugin
 * starts:
 * - `bubblewrap`: inside `bwrap` (Linux namespaces): the whole file system
 *   read-only, the workspace (and `writablePaths`) writable, a private
 *   `/tmp`, its own process tree, and no network unless `network` is set.
 * - `none`: directly, with the permissions of the user running the agent;
 *   `reason` says why (not installed, turned off, or unusable here).
 */
export type SandboxStatus =
  | { readonly kind: 'bubblewrap'; readonly executable: string; readonly network: boolean; readonly writablePaths: readonly string[] }
  | { readonly kind: 'none'; readonly reason: string }

/** `shell.sandbox: 'bubblewrap'` was configured but bubblewrap cannot run here: the plugin does not start. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError'
  readonly code = 'SANDBOX_UNAVAILABLE'
}

/**
 * Finds and tries bubblewrap. A `bwrap` on the PATH is used only after a
 * probe run with the real arguments succeeds: containers often ship the
 * binary but forbid the namespaces it needs.
 *
 * A probe that does not finish within `probeTimeoutMs` proves nothing about
 * bubblewrap (a machine too busy to start it, a stalled file system), so it
 * never makes `auto` fall back to an unconfined shell: the plugin does not
 * start (`SandboxUnavailableError`), as with `bubblewrap` required.
 */
export async function detectSandbox(
  config: Pick<ShellConfig, 'sandbox' | 'network' | 'writablePaths'>,
  root: string,
  probeTimeoutMs = PROBE_TIMEOUT_MS,
): Promise<SandboxStatus> {
  if (config.sandbox === 'off') return { kind: 'none', reason: 'the sandbox is turned off in the configuration (shell.sandbox: off)' }
  const executable = await findExecutable('bwrap')
  let reason: string
  if (executable === undefined) {
    reason = 'bubblewrap (bwrap) is not installed'
  } else {
    const status: SandboxStatus = { kind: 'bubblewrap', executable, network: config.network, writablePaths: [...config.writablePaths] }
    const failure = await probe(executable, sandboxArguments(status, root), probeTimeoutMs)
    if (failure === undefined) return status
    if (failure === TIMED_OUT) {
      throw new SandboxUnavailableError(
        `the check that bubblewrap (bwrap) can create a sandbox here did not finish within ${probeTimeoutMs / 1000} s ` +
          '(an overloaded machine?); the shell does not fall back to running unconfined on a check that could not finish: ' +
          'start again, or set shell.sandbox to "off" to run commands without a sandbox',
      )
    }
    reason = `bubblewrap (bwrap) is installed but cannot create a sandbox here (${failure})`
  }
  if (config.sandbox === 'bubblewrap') throw new SandboxUnavailableError(`shell.sandbox is "bubblewrap" but ${reason}`)
  return { kind: 'none', reason }
}

/**
 * The `bwrap` arguments before the command. Order matters: later mounts
 * cover earlier ones, so the writable workspace is bound after the private
 * `/tmp` (a workspace under `/tmp` stays visible and writable).
 */
export function sandboxArguments(status: Extract<SandboxStatus, { kind: 'bubblewrap' }>, root: string): string[] {
  return [
    '--die-with-parent',
    '--unshare-all',
    ...(status.network ? ['--share-net'] : []),
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    ...status.writablePaths.flatMap((path) => ['--bind', path, path]),
    '--bind', root, root,
    '--chdir', root,
    '--',
  ]
}

/** The first executable file named `name` on the PATH. */
export async function findExecutable(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue
    const candidate = join(dir, name)
    try {
      await access(candidate, constants.X_OK)
      return candidate
    } catch {
      // Not here.
    }
  }
  return undefined
}

/** How long the probe may take; past it, the plugin does not start (see `detectSandbox`). */
const PROBE_TIMEOUT_MS = 15_000

/** What `probe` answers when its run did not finish in time. */
const TIMED_OUT: unique symbol = Symbol('the probe timed out')

/**
 * Runs `true` in the sandbox; resolves undefined on success, `TIMED_OUT` when
 * it did not finish within `timeoutMs` (it is killed), else the first line of
 * what went wrong.
 */
function probe(executable: string, args: string[], timeoutMs: number): Promise<string | typeof TIMED_OUT | undefined> {
  return new Promise((resolve) => {
    let stderr = ''
    let timedOut = false
    const child = spawn(executable, [...args, 'true'], { stdio: ['ignore', 'ignore', 'pipe'] })
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, timeoutMs)
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 2000) stderr += chunk
    })
    child.on('error', (error) => {
      clearTimeout(timer)
      resolve(error.message)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (timedOut) resolve(TIMED_OUT)
      else if (code === 0) resolve(undefined)
      else resolve(stderr.split('\n').find((line) => line.trim() !== '')?.trim() ?? (signal ? `killed by ${signal}` : `exit code ${code}`))
    })
  })
}
