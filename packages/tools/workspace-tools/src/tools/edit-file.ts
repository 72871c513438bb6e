import { z } from 'zod'
import { ToolError, defineTool } from '@deepseek-ai/dsh-tools'
import { workspaceError } from '../errors'
import type { ToolHost } from '../host'
import { decodeStrict, looksBinary, plural } from '../text'
import { loadFile, storeFile } from './file-content'
import { pathArgument } from './path-argument'

/** How many line numbers an ambiguity error lists. */
const LISTED_LINES = 10

/**
 * `edit_file`: replaces an exact passage of a file the agent has read and
 * that has not changed since. The passage must occur exactly once, or
 * `replace_all` must be set; otherwise nothing changes and the error says how
 * often it occurs (and where). A CRLF file is matched with the LF text the
 * model saw in `read_file`, and keeps its CRLF line ends.
 */
export function editFileTool(host: ToolHost) {
  return defineTool({
    name: 'edit_file',
    description:
      'Replace text in a file you have read: old_string must match the file exactly (whitespace and indentation included, without the line-number prefix of read_file) ' +
      'and occur exactly once, unless replace_all is true. Fails without changing anything when old_string is missing or not unique, or when the file changed since you read it.',
    parameters: z.object({
      path: pathArgument(),
      old_string: z.string().describe('The exact text to replace'),
      new_string: z.string().describe('The text to put in its place'),
      replace_all: z.boolean().optional().describe('Replace every occurrence (default: old_string must be unique)'),
    }),
    effect: 'write',
    async execute({ path, old_string: before, new_string: after, replace_all: all = false }, run) {
      if (before === '') throw new ToolError('INVALID_ARGUMENTS', 'old_string is empty; to create a file or replace all of it use write_file')
      if (before === after) throw new ToolError('INVALID_ARGUMENTS', 'old_string and new_string are the same; there is nothing to change')
      const target = await host.workspace.writable(path)
      if (!target.exists) throw workspaceError('NOT_FOUND', `${target.shown} does not exist; use write_file to create it`)
      // The check of what the agent saw and the write are one step: another agent's change cannot come between.
      return host.locks.run(target.real, async () => {
        const bytes = await loadFile(host, target, 'edit_file', run.signal)
        const text = looksBinary(bytes) ? undefined : decodeStrict(bytes)
        if (text === undefined) {
          throw workspaceError('BINARY_FILE', `${target.shown} is not a UTF-8 text file; edit_file would corrupt it`)
        }
        host.ledger.check(run.agent.id, target.real, bytes, target.shown, 'edit_file')
        let search = before
        let replacement = after
        let at = occurrences(text, search)
        if (at.length === 0 && text.includes('\r\n') && before.includes('\n') && !before.includes('\r')) {
          search = before.replaceAll('\n', '\r\n')
          replacement = toCrlf(after)
          at = occurrences(text, search)
        }
        // A CRLF file stays CRLF, also where the new text adds lines to a passage that had none.
        if (text.includes('\r\n') && !/(?:^|[^\r])\n/.test(text)) replacement = toCrlf(replacement)
        if (at.length === 0) {
          throw workspaceError(
            'NO_MATCH',
            `old_string occurs 0 times in ${target.shown}; it must match the file exactly, whitespace and indentation included, ` +
              "without read_file's line-number prefix (read the file again if unsure)",
          )
        }
        const lines = linesOf(text, at)
        if (at.length > 1 && !all) {
          const listed = lines.slice(0, LISTED_LINES).join(', ') + (lines.length > LISTED_LINES ? ', …' : '')
          throw workspaceError(
            'AMBIGUOUS_MATCH',
            `old_string occurs ${at.length} times in ${target.shown} (at lines ${listed}); include more of the surrounding lines to make it unique, or set replace_all to replace every occurrence`,
          )
        }
        const edited = all ? text.split(search).join(replacement) : text.slice(0, at[0]) + replacement + text.slice(at[0]! + search.length)
        await storeFile(host, target, Buffer.from(edited, 'utf8'), run.agent.id, 'edit_file', bytes)
        return at.length === 1
          ? `Edited ${target.shown}: replaced 1 occurrence at line ${lines[0]}`
          : `Edited ${target.shown}: replaced ${plural(at.length, 'occurrence')} (at lines ${lines.slice(0, LISTED_LINES).join(', ')}${lines.length > LISTED_LINES ? ', …' : ''})`
      })
    },
  })
}

/** Every line end of `text` as CRLF (a CRLF stays one). */
function toCrlf(text: string): string {
  return text.replace(/\r?\n/g, '\r\n')
}

/** Start indexes of the non-overlapping occurrences of `search` in `text`, left to right. */
function occurrences(text: string, search: string): number[] {
  const found: number[] = []
  for (let index = text.indexOf(search); index !== -1; index = text.indexOf(search, index + search.length)) found.push(index)
  return found
}

/** The 1-based line numbers of ascending `indexes` in `text`, in one pass. */
function linesOf(text: string, indexes: readonly number[]): number[] {
  const lines: number[] = []
  let line = 1
  let newline = text.indexOf('\n')
  for (const index of indexes) {
    while (newline !== -1 && newline < index) {
      line++
      newline = text.indexOf('\n', newline + 1)
    }
    lines.push(line)
  }
  return lines
}
