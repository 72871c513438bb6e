import { z } from 'zod'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { workspaceError } from '../errors'
import { compileGlob } from '../glob-pattern'
import type { ToolHost } from '../host'
import { Walk } from '../walk'
import { pathArgument } from './path-argument'
import { relativeToStart, searchStart, underStart } from './search-start'

/**
 * `glob`: the workspace files whose path (relative to `path`) matches a
 * glob, in walk order (directories depth first, names sorted). Honours
 * `.gitignore`; never follows symbolic links.
 */
export function globTool(host: ToolHost) {
  const { limits } = host
  return defineTool({
    name: 'glob',
    description:
      'Find files by path pattern. "*" matches within one directory level, "**" any number of levels, "?" one character, "[abc]" a set, ' +
      `"{a,b}" alternatives: "**/*.ts" is every TypeScript file, "src/*.json" the JSON files directly in src. Returns matching paths (at most ${limits.maxResults}), ` +
      'relative to the workspace root. Skips files ignored by .gitignore.',
    parameters: z.object({
      pattern: z.string().min(1).describe('The glob, matched against paths relative to `path`'),
      path: pathArgument('Directory to search in, relative to the workspace root (default ".")').optional(),
    }),
    effect: 'read',
    isConcurrencySafe: () => true,
    async execute({ pattern, path }, run) {
      const glob = compileGlob(pattern.startsWith('./') ? pattern.slice(2) : pattern, { braces: true })
      const { start, isDirectory } = await searchStart(host, path)
      if (!isDirectory) throw workspaceError('NOT_A_DIRECTORY', `${start.shown} is a file, not a directory; glob searches a directory`)
      const walk = new Walk(host.workspace, host.walkOptions(run.signal))
      const found: string[] = []
      let chars = 0
      let full = false
      for await (const file of walk.files(start, true)) {
        if (!glob.matches(relativeToStart(start, file.shown))) continue
        if (found.length >= limits.maxResults || chars + file.shown.length + 1 > limits.maxOutputChars) {
          full = true
          break
        }
        found.push(file.shown)
        chars += file.shown.length + 1
      }
      if (found.length === 0 && !walk.truncated) return `No files match ${JSON.stringify(pattern)}${underStart(start)}.`
      if (full) found.push(`[stopped after ${found.length} paths; narrow the pattern or the path]`)
      if (walk.truncated) found.push(`[the search stopped after looking at ${limits.maxWalkEntries} entries; narrow the path]`)
      return found.join('\n')
    },
  })
}
