import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * V8 allocates a function literal assigned straight to a property (`this.f = (x) => …`,
 * `o.f = function …`) in the old generation: it expects a long-lived method. An old closure
 * keeps what its context holds alive through every scavenge until a full GC, so in per-turn,
 * per-step, per-call or per-chunk code it kept each model call's stream graph, a tool call's
 * stage and arguments, or a pending create's state alive for a whole cold round (notes
 * `2026-12-02-perf-survivors.md`, `-perf-turn-alloc.md`). Such a closure is made by a helper
 * that returns it, or assigned to a local first. This guards the packages on those paths.
 */
const packagesOnTheTurnPath = [
  'core/agent',
  'core/agent-loop',
  'core/tools',
  'core/session',
  'core/scope',
  'core/system-prompt',
  'core/agent-default-model',
  'llm/llm',
  'llm/llm-scripted',
  'llm/llm-openai',
  'llm/llm-anthropic',
  'llm/llm-retry',
  'runtime/agent-spine',
]

/** Lines allowed, each with why its closure lives as long as its owner anyway. */
const allowed = new Map([
  // One per session, made when the session's log is created; the log lives as long as the session.
  ['core/session/src/session-log.ts', 'this.onListenerError = (error) => {'],
])

const literalToProperty = /^\s*[\w$.]+\.[\w$]+\s*=\s*(?:async\s+)?\(?\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)/

const repoRoot = join(import.meta.dirname, '../..')

function offenders(): string[] {
  const found: string[] = []
  for (const pkg of packagesOnTheTurnPath) {
    const dir = join(repoRoot, 'packages', pkg, 'src')
    for (const file of readdirSync(dir, { recursive: true }) as string[]) {
      if (!file.endsWith('.ts')) continue
      const path = `${pkg}/src/${file}`
      readFileSync(join(dir, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (literalToProperty.test(line) && allowed.get(path) !== line.trim()) found.push(`${path}:${i + 1}: ${line.trim()}`)
        })
    }
  }
  return found
}

describe('sources on the turn path', () => {
  it('recognizes a function literal assigned straight to a property, and nothing else', () => {
    const flagged = [
      'this.onResult = (result) => stream.checked(result)',
      'this.f = async () => {',
      'o.handler = function (event) {',
      'this.g = (function () {',
      'this.h = x => x + 1',
      'this.k = (error: unknown): void => {',
    ]
    const passed = ['const f = (x) => x', 'this.f = makeHandler(this)', 'this.f = bound.bind(this)', 'this.count = (a + b) * 2', 'if (x.y === (z)) {']
    expect(flagged.filter((line) => !literalToProperty.test(line))).toEqual([])
    expect(passed.filter((line) => literalToProperty.test(line))).toEqual([])
  })

  it('assign no function literal directly to a property (V8 would allocate it old)', () => {
    expect(offenders()).toEqual([])
  })

  it('still have every allowed line (a stale allowance is removed)', () => {
    for (const [path, line] of allowed) expect(readFileSync(join(repoRoot, 'packages', path), 'utf8')).toContain(line)
  })
})
