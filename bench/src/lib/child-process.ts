/**
 * Starting bench children: every run is a fresh Node process that resolves
 * the workspace packages to their TypeScript sources (the `source` export
 * condition, through tsx), with `--expose-gc` for heap figures.
 */
import { spawn } from 'node:child_process'
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
 * Runs `script` with `args` in a child (the bench flags plus `extraFlags`)
 * under the Node binary `node` (default: this process's) and returns its
 * result line, parsed, or the reason it gave for skipping.
 */
export function runChild(script: string, args: readonly string[], extraFlags: readonly string[] = [], node: string = process.execPath): Promise<ChildOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [...childFlags(), ...extraFlags, script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (data: string) => (stdout += data))
    child.stderr.setEncoding('utf8').on('data', (data: string) => (stderr += data))
    child.on('error', reject)
    child.on('close', (code, signal) => {
      const lines = stdout.split('\n')
      const line = lines.find((l) => l.startsWith(RESULT_PREFIX))
      const skipped = lines.find((l) => l.startsWith(SKIPPED_PREFIX))
      if (code === 0 && line === undefined && skipped !== undefined) {
        resolve({ result: undefined, skipped: JSON.parse(skipped.slice(SKIPPED_PREFIX.length)) as string, stderr })
        return
      }
      if (code !== 0 || line === undefined) {
        const why = signal ? `was killed by ${signal}` : `exited with code ${code}`
        reject(new Error(`bench child ${script} ${args.slice(0, 2).join(' ')} ${why}${line ? '' : ' without a result'}:\n${stderr.trim().slice(-4000)}`))
        return
      }
      resolve({ result: JSON.parse(line.slice(RESULT_PREFIX.length)), stderr })
    })
  })
}

