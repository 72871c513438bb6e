import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Context } from 'cordis'
import { afterAll } from 'vitest'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { CallId } from '@deepseek-ai/dsh-llm'
import { SessionId } from '@deepseek-ai/dsh-session'
import Tools, { type ApprovalRequest } from '@deepseek-ai/dsh-tools'
import WorkspaceTools, { type WorkspaceToolsOptions } from '@deepseek-ai/dsh-workspace-tools'

const made: string[] = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A fresh temporary directory (under `base`, by default the system's), removed after the file's tests. */
export function tempDir(prefix = 'dsh-ws-', base = tmpdir()): string {
  const dir = mkdtempSync(join(base, prefix))
  made.push(dir)
  return dir
}

/** Writes `files` (relative path → content) under `root`, creating directories. */
export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), content)
  }
}

/**
 * A workspace with files, a directory, symbolic links that stay inside or
 * lead out to a sibling directory holding a secret, and a FIFO.
 */
export function sandboxTree() {
  const base = tempDir()
  const root = join(base, 'ws')
  const outside = join(base, 'outside')
  writeTree(base, {
    'ws/README.md': '# Sandbox\nline two\n',
    'ws/src/main.ts': 'export const answer = 42\n// TODO: more\n',
    'ws/src/deep/util.ts': 'export const TODO = true\n',
    'ws/node_modules/dep/index.js': '// TODO in a dependency\n',
    'outside/secret.txt': 'TODO secret\n',
  })
  symlinkSync(join(outside, 'secret.txt'), join(root, 'secret-link'))
  symlinkSync(outside, join(root, 'outside-dir'))
  symlinkSync(join(root, 'README.md'), join(root, 'readme-link'))
  symlinkSync(join(root, 'src'), join(root, 'src-link'))
  symlinkSync(join(outside, 'missing.txt'), join(root, 'dangling'))
  execFileSync('mkfifo', [join(root, 'pipe')])
  return { base, root, outside }
}

/** A stand-in agent: the tools read only its id. */
export function fakeAgent(id = 'agent'): Agent {
  return { id: SessionId(id) } as unknown as Agent
}

export interface ToolRun {
  /** The result code (`ok` on success) and the model-visible text. */
  code: string
  text: string
}

/**
 * `ctx.tools` with the workspace tools on `root`, and optionally an approval
 * service that answers `approval` and records each question.
 */
export async function mount(root: string, config: Partial<WorkspaceToolsOptions> = {}, approval?: 'allow' | 'deny') {
  const ctx = new Context()
  await ctx.plugin(Tools)
  const asked: string[] = []
  if (approval) {
    ctx.provide('approval', {
      async request(request: ApprovalRequest) {
        asked.push(`${request.call.name}: ${request.reason}`)
        return approval
      },
    } as never)
  }
  // Unless a test says otherwise, nothing asks: the tests of approval mount with askBefore.
  await ctx.plugin(WorkspaceTools, { askBefore: [], ...config, root } as WorkspaceToolsOptions)
  let n = 0
  const run = async (name: string, args: Record<string, unknown>, options: { agent?: Agent; signal?: AbortSignal } = {}): Promise<ToolRun> => {
    const result = await ctx.tools.execute(
      { id: CallId(`call_${++n}`), name, arguments: JSON.stringify(args) },
      { agent: options.agent ?? fakeAgent(), ...(options.signal ? { signal: options.signal } : {}) },
    )
    const block = result.message.content[0] as unknown as { content: { type: string; text: string }[] }
    return { code: result.error?.code ?? 'ok', text: block.content.map((part) => part.text).join('') }
  }
  return { ctx, run, asked }
}

/** Whether bubblewrap is installed (on the PATH). */
export function hasBubblewrap(): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v bwrap'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

export { alive, processesWith } from '@deepseek-ai/dsh-testkit'
