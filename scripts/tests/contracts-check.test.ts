// contracts-check: ignore-file (the ids and sections below are made up on purpose)
import { execFileSync } from 'node:child_process'
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkContracts, citedIds, citedSections, parseContracts } from '../contracts-check.mjs'

const fixture = join(import.meta.dirname, 'fixtures/contracts-repo')
const repoRoot = join(import.meta.dirname, '../..')
const script = join(import.meta.dirname, '../contracts-check.mjs')
const temps: string[] = []

function tempRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-contracts-'))
  temps.push(dir)
  cpSync(fixture, dir, { recursive: true })
  return dir
}

function run(dir: string): { code: number; out: string } {
  try {
    const out = execFileSync(process.execPath, [script, '--root', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    return { code: 0, out }
  } catch (error: any) {
    return { code: error.status, out: `${error.stdout}${error.stderr}` }
  }
}

function write(dir: string, path: string, text: string): void {
  mkdirSync(join(dir, path, '..'), { recursive: true })
  writeFileSync(join(dir, path), text)
}

afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('citations', () => {
  it('reads single ids, ranges and lists, with lettered ids kept whole', () => {
    const ids = (line: string) => citedIds(line).map((c) => c.id)
    expect(ids('see R-SES-2 and (R-PRM-2a).')).toEqual(['R-SES-2', 'R-PRM-2a'])
    expect(ids('R-IN-1…4, R-PER-1..3, R-CAN-5–6')).toEqual([
      'R-IN-1', 'R-IN-2', 'R-IN-3', 'R-IN-4', 'R-PER-1', 'R-PER-2', 'R-PER-3', 'R-CAN-5', 'R-CAN-6',
    ])
    expect(ids('R-LLM-3/4/6 and R-CAN-2/4')).toEqual(['R-LLM-3', 'R-LLM-4', 'R-LLM-6', 'R-CAN-2', 'R-CAN-4'])
    expect(ids('`R-…` and PR-ABC-1 and R-abc-1 are not ids')).toEqual([])
  })

  it('reads spec sections, telling the plugin contracts from the spine', () => {
    expect(citedSections('spec §13; ARCHITECTURE §6, PLUGINS §9 and PLUGINS.md § 2').map((s) => s.anchor)).toEqual([
      'spec-13', 'spec-6', 'plugins-9', 'plugins-2',
    ])
  })

  it('parses requirement paragraphs and refuses one without its anchor, an anchor without its paragraph, and a dead local link', () => {
    const text = [
      '<a id="r-a-1"></a>',
      '**R-A-1 Fine.** Links to [R-A-2](#r-a-2).',
      '',
      '**R-A-2 No anchor.** Text.',
      '',
      '<a id="r-a-3"></a>',
      'Plain text, no bold id.',
    ].join('\n')
    const parsed = parseContracts(text, 'c.md')
    expect([...parsed.requirements.keys()]).toEqual(['R-A-1'])
    expect(parsed.problems).toEqual([
      'c.md:4: the paragraph of R-A-2 needs the anchor <a id="r-a-2"></a> on the line before it',
      'c.md:2: link to #r-a-2: no such anchor on this page',
      'c.md:6: anchor "r-a-3" has no paragraph opening with **R-A-3**',
    ])
  })
})

describe('contracts check', () => {
  it('passes on the fixture: ids, ranges, lettered ids, sections and links all resolve', () => {
    const result = run(fixture)
    expect(result).toMatchObject({ code: 0 })
    expect(result.out).toContain('11 citation(s) in 4 files resolve; 4 requirement paragraphs')
  })

  it('fails on an id with no paragraph, naming file and line, including an id reached through a range', () => {
    const dir = tempRepo()
    write(dir, 'packages/grp/alpha/src/more.ts', '// one\n// Implements R-ABC-9.\n')
    appendFileSync(join(dir, '.agents/notes/note.md'), 'Also R-ABC-1…3.\n')
    const result = run(dir)
    expect(result.code).toBe(1)
    expect(result.out).toContain('contracts check: 2 problem(s)')
    expect(result.out).toContain('.agents/notes/note.md:2: R-ABC-3 has no paragraph in docs/contracts.md or docs/contracts.zh-CN.md')
    expect(result.out).toContain('packages/grp/alpha/src/more.ts:2: R-ABC-9 has no paragraph in docs/contracts.md or docs/contracts.zh-CN.md')
  })

  it('fails when the Chinese page lacks a paragraph the English page has', () => {
    const dir = tempRepo()
    const zh = join(dir, 'docs/contracts.zh-CN.md')
    writeFileSync(zh, readFileSync(zh, 'utf8').replace(/<a id="r-abc-2a"><\/a>\n\*\*R-ABC-2a[^\n]*\n/, ''))
    expect(checkContracts(dir).problems).toEqual([
      'docs/contracts.zh-CN.md:1: has no anchor "r-abc-2a" (the other page defines it on line 12)',
      'packages/grp/alpha/src/index.ts:1: R-ABC-2a has no paragraph in docs/contracts.zh-CN.md',
    ])
  })

  it('fails on a section without an anchor, a bare section in a README, and a link to a missing anchor', () => {
    const dir = tempRepo()
    write(dir, 'packages/grp/alpha/src/other.ts', '/** Budgets of spec §99. */\n')
    write(dir, 'packages/grp/alpha/README.md', '# alpha\n\nSee spec §3 and [the rule](../../../docs/contracts.md#r-abc-7).\n')
    expect(checkContracts(dir).problems).toEqual([
      'packages/grp/alpha/README.md:3: link to ../../../docs/contracts.md#r-abc-7: no such anchor in docs/contracts.md',
      'packages/grp/alpha/README.md:3: "§3" is a bare spec citation: link to docs/contracts.md#spec-3 (or the paragraph it means) instead',
      'packages/grp/alpha/src/other.ts:1: "§99" cites a section with no anchor #spec-99 in docs/contracts.md',
    ])
  })

  it('fails on a package heading whose package is missing; warns when a planned package exists', () => {
    const dir = tempRepo()
    write(dir, 'packages/grp/later/package.json', '{ "name": "@fixture/later" }\n')
    rmSync(join(dir, 'packages/grp/alpha'), { recursive: true })
    const result = checkContracts(dir)
    expect(result.problems).toEqual([
      'docs/contracts.md:4: packages/grp/alpha does not exist (mark the heading "planned", or fix the path)',
      'docs/contracts.zh-CN.md:4: packages/grp/alpha does not exist (mark the heading "planned", or fix the path)',
    ])
    expect(result.warnings).toEqual([
      'docs/contracts.md:16: packages/grp/later exists now: drop "planned" from the heading',
      'docs/contracts.zh-CN.md:16: packages/grp/later exists now: drop "planned" from the heading',
    ])
  })

  it('passes on this repository: every id and section it cites resolves', () => {
    expect(checkContracts(repoRoot).problems).toEqual([])
  })
})
