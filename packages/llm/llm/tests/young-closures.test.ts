import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * V8 allocates a function literal assigned straight to a property (`this.f = (x) => …`,
 * `o.f = function …`) in the old generation, and an old closure keeps what its context
 * references alive through every scavenge until a full GC. In per-call code (a stream per
 * model call) that held every step's stream graph, sink and request included, for the whole
 * cold round (the perf-survivors note). Such closures are made by a helper that returns them.
 */
describe("dsh-llm's sources", () => {
  it('assign no function literal directly to a property (it would be allocated old)', () => {
    const dir = join(__dirname, '../src')
    const offenders: string[] = []
    const literalToProperty = /^\s*[\w$.]+\.[\w$]+\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)/
    for (const file of readdirSync(dir, { recursive: true }) as string[]) {
      if (!file.endsWith('.ts')) continue
      readFileSync(join(dir, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (literalToProperty.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`)
        })
    }
    expect(offenders).toEqual([])
  })
})
