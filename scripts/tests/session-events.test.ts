import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { buildSessionEvents, extractSessionEvents, renderSessionEvents } from '../session-events.mjs'

const fixture = join(import.meta.dirname, 'fixtures/session-events-repo')
const script = join(import.meta.dirname, '../session-events.mjs')
const temps: string[] = []

function tempRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-session-events-'))
  temps.push(dir)
  cpSync(join(fixture, 'packages'), join(dir, 'packages'), { recursive: true })
  return dir
}

function run(dir: string, ...args: string[]): { code: number; out: string } {
  try {
    const out = execFileSync(process.execPath, [script, '--root', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    return { code: 0, out }
  } catch (error: any) {
    return { code: error.status, out: `${error.stdout}${error.stderr}` }
  }
}

const session = (text: string) => ({ path: 'packages/core/session/src/types.ts', text, package: '@deepseek-ai/dsh-session' })

afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('session events reference', () => {
  it('renders the fixture exactly as committed', () => {
    expect(buildSessionEvents(fixture)).toBe(readFileSync(join(fixture, 'expected.md'), 'utf8'))
  })

  it('reads every SessionEventMap entry: built in first, then merges, with shapes, field docs, registrations and referenced types', () => {
    const files = [
      session(readFileSync(join(fixture, 'packages/core/session/src/types.ts'), 'utf8')),
      { path: 'packages/core/session/src/note.ts', text: readFileSync(join(fixture, 'packages/core/session/src/note.ts'), 'utf8'), package: '@deepseek-ai/dsh-session' },
      { path: 'packages/grp/plugin/src/index.ts', text: readFileSync(join(fixture, 'packages/grp/plugin/src/index.ts'), 'utf8'), package: '@deepseek-ai/dsh-fixture-plugin' },
    ]
    const { events, envelope, types } = extractSessionEvents(files)
    expect(events.map((e) => [e.type, e.package, e.builtIn, e.registration?.ignorable])).toEqual([
      ['session/meta', '@deepseek-ai/dsh-session', true, undefined],
      ['turn/start', '@deepseek-ai/dsh-session', true, undefined],
      ['tool/result', '@deepseek-ai/dsh-session', true, undefined],
      ['goal/change', '@deepseek-ai/dsh-fixture-plugin', false, true],
      ['goal/secret', '@deepseek-ai/dsh-fixture-plugin', false, undefined],
    ])
    expect(events[2].fields).toEqual([
      { name: 'turn', type: 'number', doc: '' },
      { name: 'error?', type: '{ code: string; message: string }', doc: 'Set when the call failed.' },
      { name: 'error.code', type: 'string', doc: '' },
      { name: 'error.message', type: 'string', doc: '' },
      { name: 'contexts', type: '{ label: string; note: Note }[]', doc: 'The labels of the contexts.' },
      { name: 'contexts[].label', type: 'string', doc: '' },
      { name: 'contexts[].note', type: 'Note', doc: '' },
    ])
    expect(envelope).toEqual([
      { name: 'type', type: 'K', doc: '' },
      { name: 'seq', type: 'number', doc: 'Its index in the log.' },
      { name: 'data', type: 'SessionEventMap[K]', doc: '' },
    ])
    // goal.ts is not among the files: its type stays unresolved rather than guessed.
    expect(types.map((t) => t.name)).toEqual(['Note', 'SessionId', 'Trigger', 'TriggerMap'])
  })

  it('refuses an event type declared twice, naming both places', () => {
    const merge = {
      path: 'packages/grp/x/src/index.ts',
      package: '@deepseek-ai/dsh-x',
      text: "declare module '@deepseek-ai/dsh-session' {\n  interface SessionEventMap {\n    'a/b': { n: number }\n  }\n}\n",
    }
    const base = session("export interface SessionEventMap {\n  'a/b': { m: string }\n}\n")
    expect(() => extractSessionEvents([base, merge])).toThrow(
      'session events: "a/b" is declared twice (packages/core/session/src/types.ts:2 and packages/grp/x/src/index.ts:3)',
    )
  })

  it('renders an empty reference when nothing is declared', () => {
    expect(renderSessionEvents({ events: [], envelope: [], envelopeSource: undefined, types: [] })).toContain(
      'No session event types are declared yet.',
    )
  })

  // Five real `node session-events.mjs` processes, each loading the TypeScript compiler: about a
  // second apiece on an idle machine, twenty on a loaded one. The ceiling is for the loaded one.
  it('round-trips: --write then --check passes; a changed field JSDoc makes --check fail', { timeout: 300_000 }, () => {
    const dir = tempRepo()
    expect(run(dir, '--check').code).toBe(1)
    expect(run(dir).code).toBe(0)
    expect(readFileSync(join(dir, 'docs/session-events.md'), 'utf8')).toBe(readFileSync(join(fixture, 'expected.md'), 'utf8'))
    expect(run(dir, '--check')).toMatchObject({ code: 0 })
    const file = join(dir, 'packages/core/session/src/types.ts')
    writeFileSync(file, readFileSync(file, 'utf8').replace('Set when the call failed.', 'Present when the call failed.'))
    const stale = run(dir, '--check')
    expect(stale.code).toBe(1)
    expect(stale.out).toContain('docs/session-events.md is stale: run `pnpm catalog`')
  })
})
