import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { buildCatalog, extractEvents, renderCatalog } from '../events-catalog.mjs'

const fixture = join(import.meta.dirname, 'fixtures/repo')
const script = join(import.meta.dirname, '../events-catalog.mjs')
const temps: string[] = []

function tempRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-catalog-'))
  temps.push(dir)
  cpSync(join(fixture, 'packages'), join(dir, 'packages'), { recursive: true })
  return dir
}

function run(dir: string, ...args: string[]): { code: number; out: string } {
  try {
    const out = execFileSync(process.execPath, [script, '--root', dir, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    return { code: 0, out }
  } catch (error: any) {
    return { code: error.status, out: `${error.stdout}${error.stderr}` }
  }
}

afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('events catalog generator', () => {
  it('renders the fixture exactly as committed', () => {
    expect(buildCatalog(fixture)).toBe(readFileSync(join(fixture, 'expected.md'), 'utf8'))
  })

  it('reads every cordis Events block with its JSDoc and @mode, and ignores other modules', () => {
    const events = extractEvents([
      { path: 'a.ts', text: readFileSync(join(fixture, 'packages/grp/beta/src/deep/more.ts'), 'utf8') },
    ])
    expect(events.map((e) => [e.name, e.mode, e.doc])).toEqual([
      ['alpha/decide', 'serial', 'Decides.'],
      ['beta/flush', 'parallel', ''],
    ])
  })

  it('refuses an event without a @mode, naming the file and line', () => {
    const text = `declare module 'cordis' {\n  interface Events {\n    /** No mode here. */\n    'x/y'(): void\n  }\n}\n`
    expect(() => extractEvents([{ path: 'pkg/src/x.ts', text }])).toThrow(/pkg\/src\/x\.ts:4 event "x\/y" needs a @mode/)
  })

  it('refuses an event declared twice', () => {
    const text = `declare module 'cordis' {\n  interface Events {\n    /** @mode emit */\n    'x/y'(): void\n  }\n}\n`
    expect(() => extractEvents([{ path: 'a.ts', text }, { path: 'b.ts', text }])).toThrow(/declared twice/)
  })

  it('renders an empty catalog when nothing is declared', () => {
    expect(renderCatalog([])).toContain('No events are declared yet.')
  })

  // Four real `node events-catalog.mjs` processes, each loading the TypeScript compiler: the four
  // took 18 s in a whole-suite run at load 9 and 45 s at load 12, over the suite's 30 s. The
  // ceiling is for the loaded machine, as in session-events.test.ts.
  it('round-trips: --write then --check passes; a changed JSDoc makes --check fail', { timeout: 300_000 }, () => {
    const dir = tempRepo()
    expect(run(dir, '--check').code).toBe(1)
    expect(run(dir).code).toBe(0)
    expect(readFileSync(join(dir, 'docs/cordis-catalog/events.md'), 'utf8')).toBe(
      readFileSync(join(fixture, 'expected.md'), 'utf8'),
    )
    expect(run(dir, '--check')).toMatchObject({ code: 0 })
    const file = join(dir, 'packages/grp/alpha/src/events.ts')
    writeFileSync(file, readFileSync(file, 'utf8').replace('Middleware around', 'Wraps'))
    const stale = run(dir, '--check')
    expect(stale.code).toBe(1)
    expect(stale.out).toContain('is stale')
  })
})
