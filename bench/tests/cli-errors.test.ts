/**
 * `pnpm bench` given what it cannot use: it says so and exits non-zero
 * before any scenario runs (a full bench takes most of an hour: a mistake
 * found at its end loses it).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const bench = fileURLToPath(new URL('..', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'dsh-bench-errors-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

function bench_(...args: string[]) {
  const env = { ...process.env }
  delete env.DSH_PG_URL
  return spawnSync(process.execPath, ['--conditions=dsh-source', '--import', 'tsx', 'src/main.ts', '--smoke', ...args], { cwd: bench, encoding: 'utf8', env })
}

describe.concurrent('pnpm bench refuses what it cannot use, before running anything', { timeout: 120_000 }, () => {
  it('--out naming a directory', () => {
    const child = bench_('--only', 'session-postgres', '--out', work)
    expect({ status: child.status, stdout: child.stdout, error: child.stderr.match(/^Error: .*$/m)?.[0] }).toEqual({
      status: 1,
      stdout: '',
      error: `Error: --out ${work}: is a directory; give the path of the JSON file to write`,
    })
    expect(child.stderr).not.toContain('Sessions on PostgreSQL')
  })

  it('--out under a file (its directory cannot be made)', () => {
    const out = join(fileURLToPath(import.meta.url), 'report.json')
    const child = bench_('--only', 'session-postgres', '--out', out)
    expect({ status: child.status, stdout: child.stdout }).toEqual({ status: 1, stdout: '' })
    expect(child.stderr).toMatch(new RegExp(`^Error: --out ${out.replace(/[.]/g, '\\.')}: cannot be written \\(`, 'm'))
    expect(child.stderr).not.toContain('Sessions on PostgreSQL')
  })

  it('--only naming no scenario (an empty list ran every scenario)', () => {
    const child = bench_('--only=', '--out', join(work, 'none.json'))
    expect({ status: child.status, stdout: child.stdout }).toEqual({ status: 1, stdout: '' })
    expect(child.stderr).toMatch(/^Error: --only names no scenario; known: turn-overhead, /m)
    expect(child.stderr).not.toContain('1. Turn overhead')
  })

  it('--child-timeout that is not a positive whole number of minutes', () => {
    const child = bench_('--child-timeout', '0', '--only', 'session-postgres', '--out', join(work, 'zero.json'))
    expect({ status: child.status, stdout: child.stdout, error: child.stderr.match(/^Error: .*$/m)?.[0] }).toEqual({
      status: 1,
      stdout: '',
      error: 'Error: --child-timeout must be a positive integer (got 0)',
    })
  })

  it('--child-timeout longer than a Node timer holds (a longer one fired after 1 ms and killed every run)', () => {
    const child = bench_('--child-timeout', '35792', '--only', 'session-postgres', '--out', join(work, 'long.json'))
    expect({ status: child.status, stdout: child.stdout, error: child.stderr.match(/^Error: .*$/m)?.[0] }).toEqual({
      status: 1,
      stdout: '',
      error: 'Error: --child-timeout must be at most 35791 minutes, the longest a Node timer holds (got 35792)',
    })
  })
})
