/**
 * Starting bench children: every run is a fresh Node process that resolves
 * the workspace packages to their TypeScript sources (the `source` export
 * condition, through tsx), with `--expose-gc` for heap figures.
 */
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

export const RESULT_PREFIX = '@@bench-result '
/** The line of a run whose scenario was skipped (`ScenarioSkipped`): the reason, as a JSON string. */
export const SKIPPED_PREFIX = '@@bench-skipped '

/**
 * Node flags of every child: source resolution, the TypeScript loader
 * (resolved from this package, so children find it whatever their cwd), and
 * gc().
 */
export function childFlags(): string[] {
  return ['--conditions=dsh-source', '--import', import.meta.resolve('tsx'), '--expose-gc']
}

/**
 * Throws unless `@deepseek-ai/*` packages resolve to their `src/` (the bench
 * measures the sources of this checkout, never a stale `dist/`).
 */
export function assertSourceResolution(): void {
  const resolved = fileURLToPath(import.meta.resolve('@deepseek-ai/dsh-agent-loop'))
  if (!/[/\\]src[/\\]index\.ts$/.test(resolved)) {
    throw new Error(`@deepseek-ai/dsh-agent-loop resolved to ${resolved}, not to its sources: run the bench through \`pnpm bench\` (node --conditions=dsh-source)`)
  }
}

export interface ChildOutcome {
  /** The parsed result line; undefined when the run was skipped. */
  result: unknown
  /** Why the run was skipped (the child printed a `SKIPPED_PREFIX` line instead of a result). */
  skipped?: string
  stderr: string
}

/**
 * How long one run's child may take by default (`--child-timeout`): far more
 * than the slowest run measured (an AI SDK growth run, 5 to 15 minutes on two
 * loaded cores), so that only a child that hangs reaches it.
 */
export const CHILD_TIMEOUT_MS = 60 * 60_000

/**
 * Runs `script` with `args` in a child (the bench flags plus `extraFlags`)
 * under the Node binary `node` (default: this process's) and returns its
 * result line, parsed, or the reason it gave for skipping. Rejects when the
 * child fails, prints no readable result, or has not finished after
 * `timeoutMs` (it is killed then: a run that hangs must not hold the bench
 * forever).
 */
export function runChild(
  script: string,
  args: readonly string[],
  extraFlags: readonly string[] = [],
  node: string = process.execPath,
  timeoutMs: number = CHILD_TIMEOUT_MS,
): Promise<ChildOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [...childFlags(), ...extraFlags, script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    const name = `bench child ${script} ${args.slice(0, 2).join(' ')}`
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (data: string) => (stdout += data))
    child.stderr.setEncoding('utf8').on('data', (data: string) => (stderr += data))
    const timer = setTimeout(() => {
      // The processes it started first (a scenario's helper holding a session lease would block the
      // runs after it), then the child: killed first, it would leave them re-parented and out of reach.
      for (const pid of descendants(child.pid)) kill(pid)
      child.kill('SIGKILL')
      // Not waiting for 'close': a process the child started may hold its pipes open.
      child.stdout.destroy()
      child.stderr.destroy()
      reject(new Error(`${name} did not finish within ${timeoutMs / 1000} s (--child-timeout): it was killed${stderr.trim() ? `; its stderr:\n${stderr.trim().slice(-4000)}` : ''}`))
    }, timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const lines = stdout.split('\n')
      const line = lines.find((l) => l.startsWith(RESULT_PREFIX))
      const skipped = lines.find((l) => l.startsWith(SKIPPED_PREFIX))
      if (code === 0 && line === undefined && skipped !== undefined) {
        const reason = parsed(skipped.slice(SKIPPED_PREFIX.length), 'a skip line')
        if (reason instanceof Error) reject(reason)
        else resolve({ result: undefined, skipped: String(reason), stderr })
        return
      }
      if (code !== 0 || line === undefined) {
        const why = signal ? `was killed by ${signal}` : `exited with code ${code}`
        reject(new Error(`${name} ${why}${line ? '' : ' without a result'}:\n${stderr.trim().slice(-4000)}`))
        return
      }
      const result = parsed(line.slice(RESULT_PREFIX.length), 'a result line')
      if (result instanceof Error) reject(result)
      else resolve({ result, stderr })
    })
    /** The JSON of a line, or the error that fails the run (a throw here would end the bench itself). */
    const parsed = (json: string, what: string): unknown => {
      try {
        return JSON.parse(json) as unknown
      } catch {
        return new Error(`${name} printed ${what} that is not JSON: ${json.slice(0, 200)}`)
      }
    }
  })
}

/**
 * The processes `pid` started, and theirs, read from `/proc` (Linux, where the
 * bench runs; elsewhere none are found and only the child is killed).
 */
function descendants(pid: number | undefined): number[] {
  if (pid === undefined) return []
  const children = new Map<number, number[]>()
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return []
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // `pid (comm) state ppid …`: the command may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      const list = children.get(parent) ?? []
      list.push(Number(entry))
      children.set(parent, list)
    } catch {
      // Gone meanwhile.
    }
  }
  const out: number[] = []
  const queue = [pid]
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      out.push(child)
      queue.push(child)
    }
  }
  return out
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
}
