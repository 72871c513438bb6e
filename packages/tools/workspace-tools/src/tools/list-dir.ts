import { stat, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { z } from 'zod'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { fileSystemError, workspaceError } from '../errors'
import type { ToolHost } from '../host'
import { compareNames, plural } from '../text'
import { notRegular } from '../workspace'
import { pathArgument } from './path-argument'

/**
 * `list_dir`: one directory's entries, one per line, sorted by name;
 * directories (and links to directories) end with `/`; anything that is not
 * a regular file or a directory says what it is. Symbolic links are shown,
 * never followed for anything but their kind.
 */
export function listDirTool(host: ToolHost) {
  const { limits } = host
  return defineTool({
    name: 'list_dir',
    description: 'List a directory of the workspace: one entry per line, sorted by name; directories end with "/".',
    parameters: z.object({ path: pathArgument('Directory relative to the workspace root (default ".")').optional() }),
    effect: 'read',
    isConcurrencySafe: () => true,
    async execute({ path }, run) {
      const target = await host.workspace.existing(path ?? '.')
      let entries
      try {
        const info = await stat(target.real)
        if (info.isFile()) throw workspaceError('NOT_A_DIRECTORY', `${target.shown} is a file, not a directory; use read_file to read it`)
        if (!info.isDirectory()) throw notRegular(target.shown, info)
        entries = await readdir(target.real, { withFileTypes: true })
      } catch (error) {
        throw fileSystemError(error, target.shown)
      }
      run.signal.throwIfAborted()
      if (entries.length === 0) return `[${target.shown} is empty]`
      entries.sort((a, b) => compareNames(a.name, b.name))
      const lines: string[] = []
      let chars = 0
      for (const entry of entries) {
        if (lines.length >= limits.maxListEntries || chars > limits.maxOutputChars) break
        let line: string
        if (entry.isDirectory()) line = `${entry.name}/`
        else if (entry.isFile()) line = entry.name
        else if (entry.isSymbolicLink()) line = await describeLink(join(target.real, entry.name), entry.name)
        else if (entry.isFIFO()) line = `${entry.name} [FIFO]`
        else if (entry.isSocket()) line = `${entry.name} [socket]`
        else line = `${entry.name} [device]`
        lines.push(line)
        chars += line.length + 1
      }
      if (lines.length < entries.length) lines.push(`[${plural(entries.length - lines.length, 'more entry', 'more entries')} not shown]`)
      return lines.join('\n')
    },
  })
}

/** A symbolic link as a listing shows it: by the kind of what it points to (a `stat`, which never blocks). */
async function describeLink(real: string, name: string): Promise<string> {
  try {
    const info = await stat(real)
    if (info.isDirectory()) return `${name}/`
    if (info.isFile()) return name
    return `${name} [link to a special file]`
  } catch {
    return `${name} [broken link]`
  }
}
