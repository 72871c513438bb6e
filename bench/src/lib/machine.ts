import { execFileSync } from 'node:child_process'
import { cpus, loadavg, platform, release, totalmem } from 'node:os'

/** What the figures were measured on. */
export interface Machine {
  cpu: string
  cores: number
  memoryGb: number
  os: string
  node: string
}

/** The machine, with the version of `node` (the binary the runs use; default: this process's). */
export function machine(node: string = process.execPath): Machine {
  const list = cpus()
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    os: `${platform()} ${release()}`,
    node: node === process.execPath ? process.version : nodeVersion(node),
  }
}

/**
 * What `node --version` prints; throws a message naming the path when it is
 * not a working Node binary, also when it has not answered within
 * `timeoutMs` (a wrapper script that waits for something: the bench must not
 * hang before it starts).
 */
export function nodeVersion(node: string, timeoutMs = 60_000): string {
  let version: string
  try {
    version = execFileSync(node, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' }).trim()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ETIMEDOUT') throw new Error(`--node ${node}: did not answer --version within ${timeoutMs / 1000} s; give the path of a Node binary`)
    throw new Error(`--node ${node}: not a Node binary that runs here (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`)
  }
  if (!/^v\d+\.\d+\.\d+/.test(version)) throw new Error(`--node ${node}: answered "${version}" to --version, not a Node version`)
  return version
}

/** The 1-minute load average: other processes competing for the cores make wall times noisy. */
export function load(): number {
  return Math.round(loadavg()[0]! * 100) / 100
}

/**
 * The commit the figures belong to, with a mark when `packages/` has
 * uncommitted changes (the bench measures the working tree).
 */
export function revision(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    const head = git('rev-parse', '--short', 'HEAD')
    return git('status', '--porcelain', '--', 'packages') ? `${head} + uncommitted changes in packages/` : head
  } catch {
    return 'unknown (not a git checkout)'
  }
}
