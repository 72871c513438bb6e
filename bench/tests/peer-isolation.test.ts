/**
 * A peer's run must not load dsh: every run is a fresh process (`child.ts`)
 * that loads only its scenario's module, and a dsh package's module-load work
 * (a warm-up, a primed structure) would otherwise run in the peer's process
 * and change its figures. This follows the static imports of each scenario a
 * peer runs, from `child.ts` on, and fails on any value import of a
 * `@deepseek-ai/*` package or of dsh's subject module (type-only imports are
 * erased; dsh's subject is imported lazily, only for the dsh subject).
 */
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { scenarios } from '../src/scenarios/index.ts'

const src = fileURLToPath(new URL('../src/', import.meta.url))

/** The value imports of `file` (static `import … from`, not `import type`), as written. */
function valueImports(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const found: string[] = []
  for (const match of text.matchAll(/^import\s+(?!type\s)[^'"]*?from\s+['"]([^'"]+)['"]|^import\s+['"]([^'"]+)['"]/gm)) found.push((match[1] ?? match[2])!)
  return found
}

/** Every dsh module `file` loads statically, with the chain that reaches it. */
function dshLoads(file: string, seen = new Set<string>(), chain: string[] = []): string[] {
  if (seen.has(file)) return []
  seen.add(file)
  const here = [...chain, file.slice(src.length)]
  const out: string[] = []
  for (const specifier of valueImports(file)) {
    if (specifier.startsWith('@deepseek-ai/')) out.push(`${here.join(' → ')} → ${specifier}`)
    else if (specifier.startsWith('.')) {
      const target = resolve(dirname(file), specifier)
      if (target === join(src, 'subjects/dsh.ts')) out.push(`${here.join(' → ')} → subjects/dsh.ts`)
      else out.push(...dshLoads(target, seen, here))
    }
  }
  return out
}

describe('peer isolation', () => {
  it('child.ts loads no dsh module before it loads the scenario', () => {
    expect(dshLoads(join(src, 'child.ts'))).toEqual([])
  })

  for (const scenario of scenarios.filter((s) => s.subjects.some((subject) => subject !== 'dsh'))) {
    it(`scenario ${scenario.id} loads no dsh module statically (peers run it)`, () => {
      expect(dshLoads(join(src, `scenarios/${scenario.id}.ts`))).toEqual([])
    })
  }

  it('finds a dsh import where there is one', () => {
    expect(dshLoads(join(src, 'scenarios/compaction.ts')).length).toBeGreaterThan(0)
  })
})
