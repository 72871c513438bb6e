import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/**
 * Every package is `sideEffects: false`, so esbuild (tsup) drops a bare
 * `import './events'` of the package's own file and warns (ignored-bare-import).
 * Such files only augment types: reach them with `export type {} from './events'`,
 * which the bundled .d.ts keeps and the JavaScript does not need (issue 17.8).
 */
describe('package sources', () => {
  it('have no bare import of their own files (tsup would warn and drop it)', () => {
    const bare: string[] = []
    for (const group of readdirSync(join(root, 'packages'))) {
      for (const name of readdirSync(join(root, 'packages', group))) {
        let files: string[]
        try {
          files = sources(join(root, 'packages', group, name, 'src'))
        } catch {
          continue
        }
        for (const file of files) {
          readFileSync(file, 'utf8').split('\n').forEach((line, index) => {
            if (/^import\s+['"]\.{1,2}\//.test(line)) bare.push(`${relative(root, file)}:${index + 1}: ${line.trim()}`)
          })
        }
      }
    }
    expect(bare).toEqual([])
  })
})
