import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * V8 allocates a function literal assigned straight to a property (`this.f = (x) => …`,
 * `o.f = function …`) in the old generation, and an old closure keeps what it captures alive
 * through every scavenge until a full GC. The per-call path here runs four times per tool
 * turn, mostly unoptimized in a session's first turns: a closure made that way would keep each
 * call's stage, run and arguments alive for the whole cold round (the perf-llm-tools-cold
 * note). Assign such a closure to a local first, or make it with `bind`.
 */
describe("dsh-tools' sources", () => {
  it('assign no function literal directly to a property (it would be allocated old)', () => {
    const offenders: string[] = []
    const literalToProperty = /^\s*[\w$.]+\.[\w$]+\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)/
    for (const dir of [join(__dirname, '../src')]) {
      for (const file of readdirSync(dir, { recursive: true }) as string[]) {
        if (!file.endsWith('.ts')) continue
        readFileSync(join(dir, file), 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (literalToProperty.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`)
          })
      }
    }
    expect(offenders).toEqual([])
  })
})
