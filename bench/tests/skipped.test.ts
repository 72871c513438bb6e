/**
 * A scenario whose precondition is missing here (scenario 10 without
 * `DSH_PG_URL`) run through the real CLI: it says why in one line, shows the
 * reason in the table and the JSON, and is not a missed budget, also under
 * `--strict`.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import type { BenchReport } from '../src/run-bench.ts'

const bench = fileURLToPath(new URL('..', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'dsh-bench-skipped-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('a scenario skipped for a missing precondition', () => {
  it('is reported with its reason on the console, in the table and in the JSON, and misses no budget', { timeout: 120_000 }, () => {
    const out = join(work, 'skipped.json')
    const env = { ...process.env }
    delete env.DSH_PG_URL
    const child = spawnSync(process.execPath, ['--conditions=dsh-source', '--import', 'tsx', 'src/main.ts', '--smoke', '--only', 'session-postgres', '--strict', '--out', out], {
      cwd: bench,
      encoding: 'utf8',
      env,
    })
    expect(child.status, child.stderr).toBe(0)
    const reason = "DSH_PG_URL is not set: point it at a PostgreSQL database (`source scripts/ci/postgres.sh` starts this machine's cluster and sets it)"
    // One progress line says why; nothing else is said about the run.
    expect(child.stderr.split('\n').filter((line) => line.startsWith('  '))).toEqual([`  dsh skipped: ${reason}`])
    expect(child.stdout).toContain(`| **10. Sessions on PostgreSQL** | skipped: ${reason} | — |  |  |  |  | not measured |`)
    expect(child.stdout).not.toContain('Budgets missed')
    expect(child.stdout.trim().split('\n').slice(-2)).toEqual(['Every budget measured is met.', `Skipped, budgets not measured: session-postgres (${reason}).`])

    const report = JSON.parse(readFileSync(out, 'utf8')) as BenchReport & { budgets: Array<{ metric: string; skipped?: string }> }
    expect(report.scenarios.map((s) => [s.id, s.subjects.dsh])).toEqual([['session-postgres', { runs: [], median: {}, skipped: reason }]])
    expect(report.budgets.map((b) => [b.metric, b.skipped])).toEqual([
      ['appendEventsPerSecond', reason],
      ['resumeMs', reason],
      ['peakRssMb', reason],
      ['takeoverMs', reason],
    ])
  })
})
