// Finds package source files over the size limit. A file that long usually holds more than one
// concept (STYLE.md: one concept per file); splitting it is cheaper while nothing depends on its
// insides.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { listCode, listPackages, rel } from './source-graph.mjs'

/** The most lines a file in `packages/*\/*\/src` may have. */
export const MAX_SOURCE_LINES = 450

/** The number of lines of `text`, counted as an editor shows them (a final newline opens no line). */
export function lineCount(text) {
  if (text === '') return 0
  const lines = text.split('\n').length
  return text.endsWith('\n') ? lines - 1 : lines
}

/** Every source file over `limit` lines: `{ file, lines }`, `file` relative to `root`, longest first. */
export function oversizedSources(root, limit = MAX_SOURCE_LINES) {
  const out = []
  for (const pkg of listPackages(root)) {
    for (const file of listCode(join(pkg.dir, 'src'))) {
      const lines = lineCount(readFileSync(file, 'utf8'))
      if (lines > limit) out.push({ file: rel(root, file), lines })
    }
  }
  return out.sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file))
}
