import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll } from 'vitest'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { readJsonlLog as readEvents } from '@deepseek-ai/dsh-testkit'

// Reading a stored session log back and tracing it: shared with the spine bundle's tests, in the kit.
export { readEvents }
export { traceStoredLog as trace } from '@deepseek-ai/dsh-testkit'

export const packageRoot = fileURLToPath(new URL('..', import.meta.url))
export const bin = join(packageRoot, 'bin/dsh-demo.js')

/** Test fixtures the command line mounts with `DSH_DEMO_PLUGIN` (see the file). */
export const faultsPlugin = join(packageRoot, 'tests/fixtures/faults-plugin.ts')

const made: string[] = []
const mounts: string[] = []
const children: ChildProcess[] = []
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const dir of mounts) execFileSync('umount', ['-l', dir])
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A fresh temporary directory, removed after the file's tests. */
export function tempDir(prefix = 'dsh-demo-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

/**
 * A data directory whose disk is full, with the environment the command line
 * needs for it. Where the test runs as root and may mount, it is a real
 * 16 KiB tmpfs with 12 KiB taken: the session's lock file still fits, its
 * log does not (every write fails with ENOSPC, as on the full disk of issue
 * 14.1). Elsewhere, the faults fixture makes every flush of the log fail
 * (`DSH_TEST_FAIL_FLUSH`), which is what the loop sees of a full disk.
 */
export function fullDisk(): { dataDir: string; env: Record<string, string>; kind: 'tmpfs' | 'injected' } {
  const dir = tempDir('dsh-full-')
  if (process.getuid?.() === 0) {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', dir], { stdio: 'ignore' })
      mounts.push(dir)
      writeFileSync(join(dir, 'filler'), Buffer.alloc(12 * 1024))
      return { dataDir: dir, env: {}, kind: 'tmpfs' }
    } catch {
      // No mount here (a container without the capability): inject the failure instead.
    }
  }
  return { dataDir: dir, env: { DSH_DEMO_PLUGIN: faultsPlugin, DSH_TEST_FAIL_FLUSH: '1' }, kind: 'injected' }
}

/** Writes `files` (path → content) under `root`, creating directories. */
export function writeTree(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), content)
  }
}

/** A small workspace: a README, a package.json and a source directory. */
export function workspace(): string {
  const dir = tempDir('dsh-ws-')
  writeTree(dir, {
    'README.md': '# Tiny project\n\nIt adds numbers.\n',
    'package.json': '{ "name": "tiny" }\n',
    'src/add.ts': 'export const add = (a: number, b: number) => a + b\n',
  })
  return dir
}

/** A running `dsh-demo` child with its output collected. */
export interface Demo {
  readonly child: ChildProcess
  stdout(): string
  stderr(): string
  /** Resolves once stdout (or `stream`) matches `pattern` `times` times; rejects if the process exits first. */
  waitFor(pattern: RegExp, times?: number, stream?: 'stdout' | 'stderr'): Promise<void>
  write(text: string): void
  end(): void
  /** Resolves with the exit status (or the signal's name). */
  exited: Promise<number | string>
}

/** Starts `dsh-demo args` in `cwd` (colors off, no API keys inherited). */
export function startDemo(args: readonly string[], options: { cwd: string; env?: Record<string, string> }): Demo {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...options.env }
  delete env.FORCE_COLOR
  for (const key of ['DEEPSEEK_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY']) if (!options.env?.[key]) delete env[key]
  const child = spawn(process.execPath, [bin, ...args], { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
  children.push(child)
  const out = { stdout: '', stderr: '' }
  const waiters = new Set<() => void>()
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    out.stdout += text
    for (const check of waiters) check()
  })
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    out.stderr += text
    for (const check of waiters) check()
  })
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)))
  return {
    child,
    stdout: () => out.stdout,
    stderr: () => out.stderr,
    waitFor(pattern, times = 1, stream = 'stdout') {
      return new Promise((resolve, reject) => {
        const check = () => {
          const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`)
          if ((out[stream].match(global)?.length ?? 0) >= times) {
            waiters.delete(check)
            resolve()
          }
        }
        waiters.add(check)
        check()
        void exited.then(() => {
          if (!waiters.has(check)) return
          waiters.delete(check)
          reject(new Error(`dsh-demo exited before ${stream} matched ${pattern} ×${times}.\nstdout:\n${out.stdout}\nstderr:\n${out.stderr}`))
        })
      })
    },
    write: (text) => void child.stdin!.write(text),
    end: () => void child.stdin!.end(),
    exited,
  }
}

/** Runs `dsh-demo args` to its end with `input` on stdin. */
export async function runDemo(args: readonly string[], options: { cwd: string; env?: Record<string, string>; input?: string }) {
  const demo = startDemo(args, options)
  if (options.input !== undefined) demo.write(options.input)
  demo.end()
  const status = await demo.exited
  return { status, stdout: demo.stdout(), stderr: demo.stderr() }
}

/** The events of every session file in `dataDir`, by session id. */
export function sessionFiles(dataDir: string): Record<string, AnySessionEvent[]> {
  const out: Record<string, AnySessionEvent[]> = {}
  for (const name of readdirSync(dataDir)) {
    if (!name.endsWith('.jsonl')) continue
    out[name.slice(0, -'.jsonl'.length)] = readEvents(join(dataDir, name))
  }
  return out
}

/** The only session in `dataDir`. */
export function onlySession(dataDir: string): { id: string; events: AnySessionEvent[] } {
  const sessions = Object.entries(sessionFiles(dataDir))
  if (sessions.length !== 1) throw new Error(`expected one session in ${dataDir}, found ${sessions.length}`)
  const [id, events] = sessions[0]!
  return { id, events }
}
