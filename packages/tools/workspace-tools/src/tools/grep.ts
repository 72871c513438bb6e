import { RE2JS } from 're2js'
import { z } from 'zod'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { workspaceError } from '../errors'
import { compileGlob, reasonOf } from '../glob-pattern'
import { readAll, type ToolHost } from '../host'
import { safeEnd } from '@deepseek-ai/dsh-llm'
import { decodeLenient, looksBinary, plural, splitLines } from '../text'
import { Walk } from '../walk'
import { formatBytes } from './format'
import { pathArgument } from './path-argument'
import { relativeToStart, searchStart, underStart } from './search-start'

/** Characters of a matching line `grep` shows; a longer line is shown around its first match. */
const GREP_LINE_CHARS = 300

/**
 * `grep`: the lines of workspace files that match a regular expression.
 *
 * Patterns run on RE2 (`re2js`, a pure-JavaScript port): matching takes time
 * linear in the input whatever the pattern, so a model-chosen `^(a+)+$` can
 * neither freeze the process nor outlive the call's deadline, which a
 * backtracking engine (JavaScript's own `RegExp`) cannot promise. The syntax
 * is RE2's, the one ripgrep users know: no backreferences or lookaround.
 */
export function grepTool(host: ToolHost) {
  const { limits } = host
  return defineTool({
    name: 'grep',
    description:
      'Search file contents with a regular expression (RE2 syntax, as in ripgrep: no backreferences or lookaround; (?i) or ignore_case for case-insensitive). ' +
      `output "content" (default) gives "path:line: text" per matching line, "files" the matching files, "count" matches per file; at most ${limits.maxResults} results. ` +
      'Skips files ignored by .gitignore, binary files and files over ' +
      `${formatBytes(limits.maxGrepFileBytes)}.`,
    parameters: z.object({
      pattern: z.string().min(1).describe('The regular expression, matched against each line'),
      path: pathArgument('File or directory to search, relative to the workspace root (default ".")').optional(),
      glob: z.string().min(1).optional().describe('Only files matching this glob: "*.ts" matches the name at any depth, "src/**/*.ts" the path'),
      ignore_case: z.boolean().optional().describe('Match letters regardless of case'),
      output: z.enum(['content', 'files', 'count']).optional().describe('What to return (default "content")'),
    }),
    effect: 'read',
    isConcurrencySafe: () => true,
    async execute({ pattern, path, glob, ignore_case, output = 'content' }, run) {
      let regexp: RE2JS
      let whole: RE2JS | undefined
      try {
        const flags = ignore_case ? RE2JS.CASE_INSENSITIVE : 0
        regexp = RE2JS.compile(pattern, flags)
        if (prefilterSafe(pattern)) whole = RE2JS.compile(pattern, flags | RE2JS.MULTILINE)
      } catch (error) {
        throw workspaceError(
          'INVALID_PATTERN',
          `the pattern ${JSON.stringify(pattern)} is not valid RE2 (${reasonOf(error)}); grep uses RE2 syntax as ripgrep does: no backreferences or lookaround`,
          error,
        )
      }
      const filter = glob === undefined ? undefined : compileGlob(glob, { braces: true })
      const filterByName = glob !== undefined && !glob.includes('/')
      const { start, isDirectory } = await searchStart(host, path)
      const walk = new Walk(host.workspace, host.walkOptions(run.signal))
      const results: string[] = []
      let chars = 0
      let full = false
      let tooLarge = 0
      scan: for await (const file of walk.files(start, isDirectory)) {
        if (filter) {
          const subject = relativeToStart(start, file.shown)
          if (!filter.matches(filterByName ? subject.slice(subject.lastIndexOf('/') + 1) : subject)) continue
        }
        let opened
        try {
          opened = await host.workspace.openToRead({ shown: file.shown, real: file.real, exists: true })
        } catch (error) {
          if (!isDirectory) throw error
          continue // A file that became a FIFO, a link out, or unreadable since the walk saw it: not searched.
        }
        let bytes: Buffer
        try {
          if (opened.info.size > limits.maxGrepFileBytes) {
            tooLarge++
            continue
          }
          bytes = await readAll(opened.handle, opened.info.size, run.signal)
        } finally {
          await opened.handle.close()
        }
        if (looksBinary(bytes)) continue
        const text = decodeLenient(bytes)
        // One pass over the whole text first: most files do not match, and one call costs far less than one per line.
        if (whole && !whole.test(text.includes('\r') ? text.replaceAll('\r\n', '\n') : text)) continue
        const lines = splitLines(text)
        let count = 0
        for (let i = 0; i < lines.length; i++) {
          if (!regexp.test(lines[i]!)) continue
          count++
          if (output === 'files') break
          if (output === 'content') {
            const entry = `${file.shown}:${i + 1}: ${excerpt(regexp, lines[i]!)}`
            if (results.length >= limits.maxResults || chars + entry.length + 1 > limits.maxOutputChars) {
              full = true
              break scan
            }
            results.push(entry)
            chars += entry.length + 1
          }
        }
        if (count === 0 || output === 'content') continue
        const entry = output === 'files' ? file.shown : `${file.shown}: ${count}`
        if (results.length >= limits.maxResults || chars + entry.length + 1 > limits.maxOutputChars) {
          full = true
          break
        }
        results.push(entry)
        chars += entry.length + 1
      }
      const notes: string[] = []
      if (full) notes.push(`[stopped after ${plural(results.length, 'result')}; narrow the pattern, the path or the glob]`)
      if (walk.truncated) notes.push(`[the search stopped after looking at ${limits.maxWalkEntries} entries; narrow the path]`)
      if (tooLarge > 0) notes.push(`[${plural(tooLarge, 'file')} over ${formatBytes(limits.maxGrepFileBytes)} not searched]`)
      if (results.length === 0) return [`No matches for ${JSON.stringify(pattern)}${underStart(start)}.`, ...notes].join('\n')
      return [...results, ...notes].join('\n')
    },
  })
}

/**
 * Whether a whole-text test (with `^`/`$` at line boundaries) may stand in
 * for the line-by-line one as a filter: it must never miss a file that has a
 * matching line. It may match where no line does (a class that spans a
 * newline), which only costs the line scan. Text anchors (`\A`, `\z`) and a
 * flag group that could turn the multi-line mode off mean something else on
 * the whole text, so such patterns are scanned line by line only.
 */
function prefilterSafe(pattern: string): boolean {
  return !pattern.includes('\\A') && !pattern.includes('\\z') && !(pattern.includes('(?') && pattern.includes('-'))
}

/** A matching line as shown: whole when short, else a window around its first match, marked where cut. */
function excerpt(regexp: RE2JS, line: string): string {
  const trimmed = line.trim()
  if (trimmed.length <= GREP_LINE_CHARS) return trimmed
  const matcher = regexp.matcher(line)
  const at = matcher.find() ? matcher.start() : 0
  const from = safeEnd(line, Math.max(0, at - 100))
  const to = safeEnd(line, Math.min(line.length, from + GREP_LINE_CHARS))
  return `${from > 0 ? '…' : ''}${line.slice(from, to).trim()}${to < line.length ? '…' : ''}`
}
