import { mkdir, open, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import Schema from 'schemastery'
import { z } from 'zod'
import { ToolError, defineTool, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import type { Context } from './cordis'
import { Workspace } from './workspace'

/** The most `read_file` returns of one file; the rest is cut with a note saying so. */
export const MAX_READ_BYTES = 64 * 1024
/** The most matching lines `search_files` returns. */
export const MAX_SEARCH_MATCHES = 100
/** The most entries `list_dir` returns. */
export const MAX_LIST_ENTRIES = 1000
/** Files larger than this are skipped by `search_files`. */
const MAX_SEARCH_FILE_BYTES = 1024 * 1024
/** Directories `search_files` never descends into: generated or VCS data, rarely what the model looks for. */
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules'])

/** The four workspace tools, built for one workspace. */
export interface WorkspaceToolSet {
  readFile: ToolDefinition<{ path: string }>
  listDir: ToolDefinition<{ path: string }>
  searchFiles: ToolDefinition<{ pattern: string; path?: string | undefined }>
  writeFile: ToolDefinition<{ path: string; content: string }>
}

const pathArgument = z.string().min(1).describe('Path relative to the workspace root')

/**
 * Builds `read_file`, `list_dir`, `search_files` and `write_file` for
 * `workspace`. Every path goes through the workspace's confinement checks
 * (see `Workspace`); the three readers are concurrency-safe, `write_file` is
 * exclusive. Registering them is the caller's business (`WorkspaceTools`
 * does it and adds the approval policy of `write_file`).
 */
export function workspaceTools(workspace: Workspace): WorkspaceToolSet {
  const readFileTool = defineTool({
    name: 'read_file',
    description: `Read a text file of the workspace. Returns its text (at most ${MAX_READ_BYTES / 1024} KiB).`,
    parameters: z.object({ path: pathArgument }),
    isConcurrencySafe: () => true,
    async execute({ path }) {
      const absolute = await workspace.existing(path)
      const info = await stat(absolute)
      if (info.isDirectory()) throw new ToolError('TOOL_ERROR', `${path} is a directory; use list_dir to see what it holds`)
      const buffer = await readHead(absolute, Math.min(info.size, MAX_READ_BYTES))
      if (buffer.includes(0)) throw new ToolError('TOOL_ERROR', `${path} is a binary file (${info.size} bytes); read_file returns text only`)
      const text = buffer.toString('utf8')
      return info.size > buffer.length ? `${text}\n[truncated: showing the first ${buffer.length} of ${info.size} bytes]` : text
    },
  })

  const listDirTool = defineTool({
    name: 'list_dir',
    description: 'List a directory of the workspace: one entry per line, sorted by name; directories end with "/".',
    parameters: z.object({ path: pathArgument }),
    isConcurrencySafe: () => true,
    async execute({ path }) {
      const absolute = await workspace.existing(path)
      if (!(await stat(absolute)).isDirectory()) throw new ToolError('TOOL_ERROR', `${path} is not a directory; use read_file to read it`)
      const entries = await readdir(absolute, { withFileTypes: true })
      entries.sort((a, b) => compareNames(a.name, b.name))
      const lines: string[] = []
      for (const entry of entries.slice(0, MAX_LIST_ENTRIES)) {
        let directory = entry.isDirectory()
        if (entry.isSymbolicLink()) directory = await stat(join(absolute, entry.name)).then((s) => s.isDirectory(), () => false)
        lines.push(directory ? `${entry.name}/` : entry.name)
      }
      if (entries.length > MAX_LIST_ENTRIES) lines.push(`[${entries.length - MAX_LIST_ENTRIES} more entries not shown]`)
      return lines.join('\n')
    },
  })

  const searchFilesTool = defineTool({
    name: 'search_files',
    description:
      `Search the text files under a directory of the workspace (default: the root) for a regular expression ` +
      `(JavaScript syntax, case-sensitive). Returns one "path:line: text" line per match (at most ${MAX_SEARCH_MATCHES}); ` +
      'no output means no match. Skips .git and node_modules.',
    parameters: z.object({
      pattern: z.string().min(1).refine(isRegExp, 'not a valid JavaScript regular expression').describe('Regular expression to look for'),
      path: pathArgument.optional().describe('Directory or file to search, relative to the workspace root (default ".")'),
    }),
    isConcurrencySafe: () => true,
    async execute({ pattern, path }, run) {
      const start = await workspace.existing(path ?? '.')
      const regexp = new RegExp(pattern)
      const hits: string[] = []
      const files = (await stat(start)).isDirectory() ? walk(start) : single(start)
      for await (const file of files) {
        run.signal.throwIfAborted()
        const info = await stat(file)
        if (info.size > MAX_SEARCH_FILE_BYTES) continue
        const buffer = await readFile(file)
        if (buffer.subarray(0, 8000).includes(0)) continue
        const lines = buffer.toString('utf8').split('\n')
        for (let i = 0; i < lines.length; i++) {
          if (!regexp.test(lines[i]!)) continue
          hits.push(`${workspace.display(file)}:${i + 1}: ${clip(lines[i]!.trim(), 200)}`)
          if (hits.length >= MAX_SEARCH_MATCHES) return `${hits.join('\n')}\n[stopped after ${MAX_SEARCH_MATCHES} matches]`
        }
      }
      return hits.join('\n')
    },
  })

  const writeFileTool = defineTool({
    name: 'write_file',
    description: 'Create or overwrite a text file in the workspace (missing parent directories are created). Each write needs the approval of the person.',
    parameters: z.object({ path: pathArgument, content: z.string().describe('The complete new content of the file') }),
    async execute({ path, content }) {
      const absolute = await workspace.writable(path)
      await mkdir(dirname(absolute), { recursive: true })
      await writeFile(absolute, content, 'utf8')
      return `Wrote ${Buffer.byteLength(content)} bytes to ${workspace.display(absolute)}`
    },
  })

  return { readFile: readFileTool, listDir: listDirTool, searchFiles: searchFilesTool, writeFile: writeFileTool }
}

/** The plugin's options. */
export interface WorkspaceToolsConfig {
  /** The directory the tools are confined to; relative to the process's working directory. */
  root: string
}

export const WorkspaceToolsConfig: Schema<WorkspaceToolsConfig> = Schema.object({
  root: Schema.string().required().description('The directory the tools are confined to.'),
})

/**
 * Registers the workspace tools on `ctx.tools` (global to every agent,
 * reverted with the plugin) and the policy of `write_file`: a
 * `tools/pre-execute` listener that denies a write outside the workspace
 * outright, and otherwise turns an `allow` into `ask`, so each write goes to
 * the `ctx.approval` service (a denial when none is mounted). A policy
 * registered after this one that denies still wins.
 */
export const WorkspaceTools = {
  name: 'dsh-workspace-tools',
  inject: ['tools'],
  Config: WorkspaceToolsConfig,
  async apply(ctx: Context, config: WorkspaceToolsConfig): Promise<void> {
    const workspace = await Workspace.open(config.root)
    const tools = workspaceTools(workspace)
    for (const tool of Object.values(tools)) ctx.tools.register(tool)
    ctx.on('tools/pre-execute', async (invocation, next) => {
      if (invocation.tool !== tools.writeFile) return next()
      const { path, content } = invocation.args as { path: string; content: string }
      try {
        await workspace.writable(path)
      } catch (error) {
        if (error instanceof ToolError && error.code === 'DENIED') return { kind: 'deny', reason: error.message }
        // Anything else (a file system error) is the body's to report.
      }
      const decision = await next()
      if (decision.kind !== 'allow') return decision
      return { kind: 'ask', reason: `write ${Buffer.byteLength(content)} bytes to ${path}` }
    })
  },
}

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const handle = await open(path, 'r')
  try {
    const buffer = Buffer.alloc(bytes)
    let filled = 0
    while (filled < bytes) {
      const { bytesRead } = await handle.read(buffer, filled, bytes - filled, filled)
      if (bytesRead === 0) break
      filled += bytesRead
    }
    return buffer.subarray(0, filled)
  } finally {
    await handle.close()
  }
}

/** Every regular file under `directory`, depth first in name order; symlinks are not followed (they could lead out). */
async function* walk(directory: string): AsyncGenerator<string> {
  const entries = await readdir(directory, { withFileTypes: true })
  entries.sort((a, b) => compareNames(a.name, b.name))
  for (const entry of entries) {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.has(entry.name)) yield* walk(path)
    } else if (entry.isFile()) {
      yield path
    }
  }
}

async function* single(path: string): AsyncGenerator<string> {
  yield path
}

/** Code-point order: the same on every machine and locale, so a listing is byte-stable. */
function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function isRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern)
    return true
  } catch {
    return false
  }
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}
