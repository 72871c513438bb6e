/**
 * `pnpm bench:smoke` as CI runs it: every scenario at tiny sizes, every
 * subject, in real child processes. It asserts that each run produced its
 * figures and the results that do not depend on time (prefix stability,
 * counts), never a duration.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import type { BenchReport } from '../src/run-bench.ts'

const bench = fileURLToPath(new URL('..', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'dsh-bench-smoke-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('pnpm bench:smoke', () => {
  it('runs every scenario for every subject it names and writes the figures', { timeout: 600_000 }, () => {
    const out = join(work, 'smoke.json')
    const child = spawnSync(process.execPath, ['--conditions=dsh-source', '--import', 'tsx', 'src/main.ts', '--smoke', '--out', out], {
      cwd: bench,
      encoding: 'utf8',
    })
    expect(child.stderr).not.toMatch(/could not run|failed:/)
    expect(child.status).toBe(0)
    const report = JSON.parse(readFileSync(out, 'utf8')) as BenchReport
    expect(report.mode).toBe('smoke')

    const subjects = Object.fromEntries(report.scenarios.map((s) => [s.id, Object.keys(s.subjects)]))
    expect(subjects).toEqual({
      'turn-overhead': ['dsh', 'pi-agent-core', 'ai-sdk'],
      'tool-turns': ['dsh', 'pi-agent-core', 'ai-sdk'],
      growth: ['dsh', 'pi-agent-core', 'ai-sdk'],
      streaming: ['dsh', 'pi-agent-core', 'ai-sdk'],
      'parallel-tools': ['dsh', 'pi-agent-core', 'ai-sdk'],
      resume: ['dsh'],
      'prefix-stability': ['dsh'],
      'mcp-call-overhead': ['dsh'],
      compaction: ['dsh'],
      'session-postgres': ['dsh'],
      'subagent-overhead': ['dsh'],
    })
    // Every subject ran once and every figure is a finite number. Scenario 10 may be skipped where no
    // PostgreSQL server is configured, as the dsh-session-postgres tests are (never in CI: DSH_PG_REQUIRED).
    for (const scenario of report.scenarios) {
      for (const [subject, result] of Object.entries(scenario.subjects)) {
        if (scenario.id === 'session-postgres' && result!.skipped !== undefined && process.env.DSH_PG_REQUIRED !== '1') continue
        expect({ scenario: scenario.id, subject, runs: result!.runs.length, error: result!.error, skipped: result!.skipped }).toEqual({
          scenario: scenario.id,
          subject,
          runs: 1,
          error: undefined,
          skipped: undefined,
        })
        for (const value of Object.values(result!.median)) expect(Number.isFinite(value)).toBe(true)
      }
    }

    const figures = (id: string) => report.scenarios.find((s) => s.id === id)!.subjects.dsh!.median
    // Model-visible bytes only ever grow by appending, across the resume too.
    expect(figures('prefix-stability')).toMatchObject({ requests: 20, extended: 19, share: 100, resumeExtends: 1 })
    // The growth run did the turns it was asked for, and the resumed session has every written event.
    expect(figures('growth').turns).toBe(40)
    expect(figures('resume').events).toBeGreaterThanOrEqual(3000)
    // Compaction on a small window: no request over it, prefix-stable between compactions, no failed turn.
    expect(figures('compaction')).toMatchObject({ overWindow: 0, extendShare: 100, failedTurns: 0 })

    // Issue 18's criterion: a pi / dsh ratio for scenarios 1, 2 and 4, in the JSON and at the top of the table.
    const criterion = (report as BenchReport & { criterion: Array<{ scenario: string; ratio: number; pass: boolean }> }).criterion
    expect(criterion.map((c) => [c.scenario, Number.isFinite(c.ratio), c.pass === c.ratio >= 1])).toEqual([
      ['turn-overhead', true, true],
      ['tool-turns', true, true],
      ['streaming', true, true],
    ])
    expect(child.stdout).toMatch(/^\*\*Done criterion \(issue 18\): pi-agent-core \/ dsh ≥ 1\.0 on scenarios 1, 2 and 4/m)
    // The steady-state figures are there for dsh and pi, not for the AI SDK (one round only).
    const turns = report.scenarios.find((s) => s.id === 'turn-overhead')!.subjects
    expect([turns.dsh!.median.steadyUsPerTurn, turns['pi-agent-core']!.median.steadyUsPerTurn, turns['ai-sdk']!.median.steadyUsPerTurn].map((v) => v !== undefined)).toEqual([true, true, false])

    // The table names every scenario.
    for (const title of ['1. Turn overhead', '2. Tool turns', '3. Growth', '4. Streaming', '5. Parallel tools', '6. Resume', '7. Prefix stability']) {
      expect(child.stdout).toContain(`**${title}**`)
    }
  })

  it.skipIf(process.platform === 'win32')('runs the scenarios under the Node binary given by --node, with the stream batch given by --stream-batch and the flags given by --node-flag', { timeout: 600_000 }, () => {
    const out = join(work, 'node.json')
    const calls = join(work, 'node-calls.log')
    // A "Node binary" that notes each start, then is this Node.
    const wrapper = join(work, 'node-wrapper')
    writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> '${calls}'\nexec '${process.execPath}' "$@"\n`)
    chmodSync(wrapper, 0o755)
    const child = spawnSync(
      process.execPath,
      ['--conditions=dsh-source', '--import', 'tsx', 'src/main.ts', '--smoke', '--only', 'streaming,prefix-stability', '--subjects', 'dsh', '--node', wrapper, '--stream-batch', '16', '--node-flag=--no-turbofan', '--out', out],
      { cwd: bench, encoding: 'utf8' },
    )
    expect(child.status, child.stderr).toBe(0)
    const report = JSON.parse(readFileSync(out, 'utf8')) as BenchReport
    expect({ nodePath: report.nodePath, node: report.machine.node, nodeFlags: report.nodeFlags, batch: (report.scenarios[0]!.params as { batch: number }).batch }).toEqual({
      nodePath: wrapper,
      node: process.version,
      nodeFlags: ['--no-turbofan'],
      batch: 16,
    })
    expect(child.stdout).toContain(`Node ${process.version} with --no-turbofan;`)
    // One start to read its version, then one child per run (the streaming run and the prefix run), each with the flag.
    const starts = readFileSync(calls, 'utf8').trim().split('\n')
    expect(starts.map((line) => [line.split(' ')[0], line.split(' ').includes('--no-turbofan')])).toEqual([
      ['--version', false],
      ['--conditions=dsh-source', true],
      ['--conditions=dsh-source', true],
    ])
  })
})
