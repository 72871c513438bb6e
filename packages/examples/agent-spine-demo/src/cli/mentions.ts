import { closeSync, openSync, readSync, readdirSync, realpathSync, statSync } from 'node:fs'
import { isAbsolute, relative, resolve, sep } from 'node:path'
import type { AgentInput } from '@deepseek-ai/dsh-agent'

/** The most characters of one file a mention attaches (as much as dsh-workspace-tools' `read_file` returns). */
export const MENTION_MAX_CHARS = 60_000
/** The most entries of a directory a mention lists. */
const MAX_ENTRIES = 200

/** A prompt with its `@path` mentions resolved. */
export interface ExpandedPrompt {
  /** What to hand the agent: the text as typed, with each attached file as a context before it (`prompt-prefix`). */
  input: AgentInput
  /** The workspace paths attached, in the order first mentioned. */
  attached: string[]
  /** One sentence per mention that was left as text, saying why (`@x: no such file in the workspace`). */
  notes: string[]
}

// `@path` at the start or after whitespace; `@"a path with spaces"` too. An e-mail address (`me@host`) is not a mention.
const MENTION = /(?<=^|\s)@(?:"([^"]+)"|(\S+))/g

/**
 * Resolves the `@path` mentions of a prompt against the workspace `cwd`: each
 * one that names a file inside it is attached as a context of the prompt
 * (labelled `file: <path>` in the model-hidden envelope; the model sees
 * `<file path="…">` and the file's text, cut at `MENTION_MAX_CHARS`), a
 * directory as the list of its entries. The prompt's own text is unchanged,
 * so the model reads the mention where it was written. A mention that names
 * nothing, leaves the workspace, or names a binary file stays text, with a
 * note; trailing punctuation (`@a.ts,`) is dropped when the path without it
 * exists. A prompt without mentions comes back as the plain string.
 */
export function expandMentions(text: string, cwd: string): ExpandedPrompt {
  const attached: string[] = []
  const notes: string[] = []
  const contexts: { label: string; content: { type: 'text'; text: string }[] }[] = []
  let root: string
  try {
    root = realpathSync(cwd)
  } catch {
    return { input: text, attached, notes }
  }
  for (const match of text.matchAll(MENTION)) {
    const written = match[1] ?? match[2]!
    const found = locate(root, written)
    if (typeof found === 'string') {
      notes.push(`@${written}: ${found} (sent as text)`)
      continue
    }
    if (attached.includes(found.path)) continue
    const body = found.directory ? listing(found.absolute) : readText(found.absolute)
    if (body === undefined) {
      notes.push(`@${written}: ${found.path} is not a text file (sent as text)`)
      continue
    }
    attached.push(found.path)
    const kind = found.directory ? 'directory' : 'file'
    contexts.push({ label: `${kind}: ${found.path}`, content: [{ type: 'text', text: `<${kind} path="${found.path}">\n${body}\n</${kind}>` }] })
  }
  if (contexts.length === 0) return { input: text, attached, notes }
  return { input: { content: text, contexts, placement: 'prompt-prefix' }, attached, notes }
}

/** The workspace entry a mention names, or why it names none. */
function locate(root: string, written: string): { path: string; absolute: string; directory: boolean } | string {
  const candidates = [written]
  const trimmed = written.replace(/[.,;:!?)\]}'"]+$/, '')
  if (trimmed && trimmed !== written) candidates.push(trimmed)
  let reason = 'no such file in the workspace'
  for (const candidate of candidates) {
    const absolute = resolve(root, candidate)
    let real: string
    try {
      real = realpathSync(absolute)
    } catch {
      continue
    }
    const path = relative(root, real)
    if (path.startsWith(`..${sep}`) || path === '..' || isAbsolute(path)) {
      reason = 'outside the workspace'
      continue
    }
    const info = statSync(real)
    if (!info.isFile() && !info.isDirectory()) {
      reason = 'not a file or directory'
      continue
    }
    return { path: path === '' ? '.' : path.split(sep).join('/'), absolute: real, directory: info.isDirectory() }
  }
  return reason
}

/** The text of a file, cut at `MENTION_MAX_CHARS`; undefined for a binary file (a NUL byte). */
function readText(file: string): string | undefined {
  // Read a little more than the cap (UTF-8 takes up to 4 bytes a character) and never the whole of a huge file.
  const buffer = Buffer.alloc(MENTION_MAX_CHARS * 4 + 4)
  const fd = openSync(file, 'r')
  let size: number
  try {
    size = readSync(fd, buffer, 0, buffer.length, 0)
  } finally {
    closeSync(fd)
  }
  const bytes = buffer.subarray(0, size)
  if (bytes.includes(0)) return undefined
  const text = bytes.toString('utf8')
  const total = statSync(file).size
  if (text.length <= MENTION_MAX_CHARS && size === total) return text.replace(/\n$/, '')
  return `${text.slice(0, MENTION_MAX_CHARS)}\n[cut: the file has ${total.toLocaleString('en-US')} bytes; read_file reads the rest]`
}

/** A directory's entries, sorted, directories marked with `/`. */
function listing(directory: string): string {
  const entries = readdirSync(directory, { withFileTypes: true })
    .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
    .sort()
  const shown = entries.slice(0, MAX_ENTRIES)
  if (entries.length > MAX_ENTRIES) shown.push(`[… ${entries.length - MAX_ENTRIES} more]`)
  return shown.join('\n')
}
