import { realpath } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { effectOf, type ApprovalScope, type ToolCall, type ToolEffect, type ToolInvocation } from '@deepseek-ai/dsh-tools'
import type { CallFacts, PathSpelling } from './rules'
import { parseShellCommand } from './shell/command'
import { WRAPPERS } from './shell/prefix'

/** What the checks know about one call: the rules' facts, its effect, and whether its `command` is a shell line. */
export interface GatheredFacts extends CallFacts {
  readonly effect: ToolEffect
  readonly shell: boolean
}

/** What the facts need from dsh-workspace-tools, when it is mounted (read with `ctx.get`). */
export interface WorkspaceToolsView {
  readonly root?: string
  readonly definitions?: Readonly<Record<string, unknown>>
  contains?(path: string): Promise<boolean>
  describe?(invocation: Pick<ToolInvocation, 'tool' | 'args'>): string | undefined
}

/**
 * The facts of a call: its `path` (or `file_path`) argument resolved
 * against the workspace `root` (relative inside it, absolute otherwise) and
 * where it leads once symbolic links are resolved (`resolved`, when that is
 * another place: a link inside the workspace, or the root spelled by its
 * real path), and its `command` argument parsed. "Inside" holds only when
 * the path is inside lexically and where it leads is inside too.
 */
export async function gatherFacts(
  invocation: ToolInvocation,
  options: { root: string | undefined; shellTools: readonly string[]; workspace: WorkspaceToolsView | undefined },
): Promise<GatheredFacts> {
  const args = (invocation.args ?? {}) as Record<string, unknown>
  const raw = typeof args.path === 'string' ? args.path : typeof args.file_path === 'string' ? args.file_path : undefined
  const { root, workspace } = options
  let path: CallFacts['path']
  if (raw !== undefined && raw !== '' && !raw.includes('\0')) {
    const absolute = root !== undefined ? resolve(root, raw) : isAbsolute(raw) ? resolve(raw) : undefined
    const within = root !== undefined && absolute !== undefined ? relative(root, absolute) : isAbsolute(raw) ? undefined : normalized(raw)
    const lexicallyInside = within !== undefined && isInside(within)
    const relativePath = lexicallyInside ? slashed(within) : undefined
    let inside = lexicallyInside && root !== undefined
    let resolved: PathSpelling | undefined
    let aliases: string[] | undefined
    if (absolute !== undefined) {
      const [real, realRoot] = await Promise.all([realLocation(absolute), root !== undefined ? realLocation(root) : undefined])
      const realWithin = real !== undefined && realRoot !== undefined ? relative(realRoot, real) : undefined
      const realRelative = realWithin !== undefined && isInside(realWithin) ? slashed(realWithin) : undefined
      if (real !== undefined && realRelative !== undefined && realRelative === relativePath) {
        // The same place, also named from the root's real path (`/private/tmp/ws/x` for `/tmp/ws/x`).
        if (real !== absolute) aliases = [real]
      } else if (real !== undefined && (real !== absolute || realRelative !== relativePath)) {
        // Another place: a link inside the workspace, a link out, or the root named by its real path.
        resolved = {
          absolute: real,
          ...(realRelative !== undefined ? { relative: realRelative } : {}),
          ...(realRelative !== undefined && root !== undefined && join(root, realRelative) !== real ? { aliases: [join(root, realRelative)] } : {}),
        }
        if (realRelative === undefined) inside = false
      }
    }
    // The workspace tools resolve symbolic links: a link out of the workspace is not inside.
    if (inside && workspace?.contains && Object.values(workspace.definitions ?? {}).includes(invocation.tool)) inside = await workspace.contains(raw)
    path = {
      absolute: absolute ?? raw,
      inside,
      ...(relativePath !== undefined ? { relative: relativePath } : {}),
      ...(aliases ? { aliases } : {}),
      ...(resolved ? { resolved } : {}),
    }
  }
  const command = typeof args.command === 'string' ? await parseShellCommand(args.command) : undefined
  return {
    tool: invocation.call.name,
    effect: effectOf(invocation.tool),
    shell: options.shellTools.includes(invocation.call.name),
    ...(path ? { path } : {}),
    ...(command ? { command } : {}),
  }
}


function isInside(within: string): boolean {
  return within !== '..' && !within.startsWith(`..${sep}`) && !isAbsolute(within)
}

function slashed(within: string): string {
  return within.split(sep).join('/') || '.'
}

/**
 * Where `absolute` leads once every symbolic link is resolved: the real
 * path of its nearest existing ancestor joined with the names below it (a
 * file about to be created). Undefined when the file system does not say
 * (a loop, no permission): the tool meets the same error.
 */
async function realLocation(absolute: string): Promise<string | undefined> {
  const below: string[] = []
  for (let at = absolute; ; at = dirname(at)) {
    try {
      const real = await realpath(at)
      return below.length ? join(real, ...below.reverse()) : real
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined
    }
    if (dirname(at) === at) return undefined
    below.push(basename(at))
  }
}

/** `a/./b/../c` → `a/c`; a path that climbs above its start gives `..` (outside). */
function normalized(raw: string): string {
  const parts: string[] = []
  for (const part of raw.split(/[\\/]+/)) {
    if (part === '' || part === '.') continue
    if (part === '..') {
      if (!parts.length) return `..${sep}`
      parts.pop()
    } else parts.push(part)
  }
  return parts.join(sep)
}

/**
 * What an "always" answer to a question the mode raised covers: edits in
 * the file's directory (`src/cli/**`, or the file itself at the root; none
 * for a path that leads elsewhere through a symbolic link), a
 * command by its first word or two (`git status`, `npm test`, `ls`; none for
 * a compound command or one that writes a file; a shell or an interpreter
 * only with its script, `python3 build.py`, else none; none for a wrapper
 * such as `sudo` or `timeout`), or every call of the tool.
 */
export function suggestScope(tool: string, facts: CallFacts): ApprovalScope | undefined {
  if (facts.command) {
    const command = facts.command
    if (command.kind !== 'parsed' || command.parts.length !== 1 || command.writes.length) return undefined
    const part = command.parts[0]!
    const [first, second] = part.words
    if (part.assignments || !first || first.text === undefined || first.expands || !/^[\w.+-][\w./+-]*$/.test(first.text)) return undefined
    const words = [first.text]
    const name = first.text.slice(first.text.lastIndexOf('/') + 1)
    // `sudo`, `timeout 5`, `env X=1` run whatever follows: no prefix of them is a narrow scope.
    if (WRAPPERS.has(name)) return undefined
    if (RUNS_SCRIPTS.has(name)) {
      // `python3` or `bash` alone would allow any code (`python3 -c …`): the scope names the script too, or there is none.
      if (!second || second.text === undefined || second.expands || !/^[\w.+/][\w./+:-]*$/.test(second.text)) return undefined
      words.push(second.text)
    } else if (second && second.text !== undefined && !second.expands && /^[a-z][\w:-]*$/i.test(second.text)) {
      words.push(second.text)
    }
    return { tool, command: words.join(' ') }
  }
  if (facts.path) {
    const relativePath = facts.path.relative
    // A path that leads elsewhere through a link: an "always" for its directory would not cover it (allow rules need both spellings).
    if (!facts.path.inside || facts.path.resolved || relativePath === undefined || relativePath === '.') return undefined
    const slash = relativePath.lastIndexOf('/')
    const glob = (text: string) => text.replace(/[*?[\]{}\\]/g, '\\$&')
    return { tool, path: slash < 0 ? glob(relativePath) : `${glob(relativePath.slice(0, slash))}/**` }
  }
  return { tool }
}

/** Shells and interpreters: they run the code their arguments name (a script, or `-c`/`-e` code). */
const RUNS_SCRIPTS = new Set([
  ...['bash', 'sh', 'dash', 'zsh', 'ksh', 'fish', 'eval', 'source', '.'],
  ...['python', 'python2', 'python3', 'node', 'deno', 'bun', 'ruby', 'perl', 'php', 'lua', 'Rscript', 'pwsh', 'awk', 'gawk', 'osascript'],
])

/** Two calls are identical when they name the same tool with the same arguments (keys in any order). */
export function callIdentity(call: ToolCall): string {
  try {
    return `${call.name}\u0000${stableJson(JSON.parse(call.arguments || '{}'))}`
  } catch {
    return `${call.name}\u0000${call.arguments}`
  }
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((name) => `${JSON.stringify(name)}:${stableJson((value as Record<string, unknown>)[name])}`)
      .join(',')}}`
  }
  return JSON.stringify(value)
}
