import { z } from 'zod'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { workspaceError } from '../errors'
import { readAll, type ToolHost } from '../host'
import { clipLine, decodeLenient, decodeStrict, looksBinary, numbered, plural, splitLines } from '../text'
import { formatBytes } from './format'
import { pathArgument } from './path-argument'

/**
 * `read_file`: a text file's lines, numbered like `cat -n`, a range of them
 * at a time. Reading records what the agent saw, which `edit_file` and
 * `write_file` check before changing the file.
 */
export function readFileTool(host: ToolHost) {
  const { limits } = host
  return defineTool({
    name: 'read_file',
    description:
      'Read a text file of the workspace. Each line comes back as its number, a tab, then the line (the number and tab are not part of the file). ' +
      `Returns the first ${limits.readLines} lines unless you give offset and limit; longer lines are cut at ${limits.maxLineChars} characters. ` +
      'Read a file before you edit_file or overwrite it.',
    parameters: z.object({
      path: pathArgument(),
      offset: z.number().int().min(1).optional().describe('The first line to read, counting from 1 (default 1)'),
      limit: z.number().int().min(1).optional().describe(`How many lines to read (default ${limits.readLines})`),
    }),
    effect: 'read',
    isConcurrencySafe: () => true,
    async execute({ path, offset, limit }, run) {
      const target = await host.workspace.existing(path)
      const { handle, info } = await host.workspace.openToRead(target, '; use list_dir to see what it holds')
      let bytes: Buffer
      try {
        if (info.size > limits.maxFileBytes) {
          throw workspaceError(
            'FILE_TOO_LARGE',
            `${target.shown} is ${formatBytes(info.size)}, more than read_file loads (${formatBytes(limits.maxFileBytes)}); ` +
              "find the lines you need with grep, or print a range with shell (e.g. sed -n '100,200p')",
          )
        }
        bytes = await readAll(handle, info.size, run.signal)
      } finally {
        await handle.close()
      }
      if (looksBinary(bytes)) throw workspaceError('BINARY_FILE', `${target.shown} is a binary file (${formatBytes(bytes.length)}); read_file shows text only`)
      host.ledger.remember(run.agent.id, target.real, bytes)
      const lines = splitLines(decodeLenient(bytes))
      if (lines.length === 0) return `[${target.shown} is empty]`
      // The model cannot tell a U+FFFD of the file from one of the decoding: it is told, or it may write the lossy text back.
      const lossy =
        decodeStrict(bytes) === undefined
          ? `[${target.shown} is not UTF-8 text: bytes that are not UTF-8 are shown as \ufffd; writing this text back would lose them, so change the file with shell (e.g. sed) rather than write_file]`
          : undefined
      const first = offset ?? 1
      if (first > lines.length) return `[offset ${first} is past the end: ${target.shown} has ${plural(lines.length, 'line')}]`
      const last = Math.min(lines.length, first + (limit ?? limits.readLines) - 1)
      const out: string[] = []
      let chars = 0
      let shownLast = first - 1
      for (let n = first; n <= last; n++) {
        const line = numbered(n, clipLine(lines[n - 1]!, limits.maxLineChars))
        if (n > first && chars + line.length + 1 > limits.maxOutputChars) break
        out.push(line)
        chars += line.length + 1
        shownLast = n
      }
      if (shownLast < lines.length) out.push(`[showing lines ${first}-${shownLast} of ${lines.length}; read on with offset ${shownLast + 1}]`)
      if (lossy) out.push(lossy)
      return out.join('\n')
    },
  })
}
