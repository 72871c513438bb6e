import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * V8 allocates a function literal assigned straight to a property (`this.f = (x) => …`,
 * `o.f = function …`) in the old generation, and an old closure keeps what its context holds
 * alive through every scavenge until a full GC: in dsh-agent-loop's per-turn and per-step code
 * it would keep each turn's or step's objects alive for the whole cold round, in a create or
 * resume call its pending state (the perf-survivors and perf-turn-alloc notes). Make such a
 * closure in a helper that returns it, or assign it to a local first.
 */
describe("dsh-agent-loop's sources", () => {
  it('assign no function literal directly to a property (it would be allocated old)', () => {
    const offenders: string[] = []
    const literalToProperty = /^\s*[\w$.]+\.[\w$]+\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)/
    const dir = join(__dirname, '../src')
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
