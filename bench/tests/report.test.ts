import { describe, expect, it } from 'vitest'
import { median } from '../src/lib/measure.ts'
import { parseNodeOption, positiveInteger } from '../src/lib/options.ts'
import { budgetChecks, criterionChecks, markdown, missedBudgets, peerOverDsh } from '../src/report.ts'
import type { BenchReport } from '../src/run-bench.ts'

const one = (metrics: Record<string, number>) => ({ runs: [metrics], median: metrics })

const report: BenchReport = {
  date: '2026-11-30T12:00:00.000Z',
  mode: 'full',
  revision: 'abc1234',
  machine: { cpu: 'Test CPU', cores: 2, memoryGb: 24, os: 'linux 6.0', node: 'v20.20.2' },
  load: { start: 1.5, end: 2 },
  durationSeconds: 42,
  scenarios: [
    {
      id: 'turn-overhead',
      title: '1. Turn overhead',
      description: '2,000 turns',
      params: { turns: 2000, warmup: 200, rounds: 5 },
      subjects: {
        dsh: one({ usPerTurn: 40, cpuUsPerTurn: 38, steadyUsPerTurn: 100, steadyCpuUsPerTurn: 50 }),
        'pi-agent-core': one({ usPerTurn: 120, cpuUsPerTurn: 100, steadyUsPerTurn: 80, steadyCpuUsPerTurn: 60 }),
        'ai-sdk': { runs: [], median: {}, error: 'Cannot find module ai\nstack…' },
      },
    },
    {
      id: 'growth',
      title: '3. Growth',
      description: '10,000 text turns',
      params: {},
      subjects: { dsh: one({ heapPerEvent: 150 }) },
    },
    {
      id: 'streaming',
      title: '4. Streaming',
      description: 'one turn of 100,000 text deltas',
      params: { chunks: 100_000, batch: 64, rounds: 5 },
      subjects: {
        dsh: one({ chunksPerSecond: 600_000, chunksPerSecondJsonl: 200_000 }),
        'pi-agent-core': one({ chunksPerSecond: 800_000 }),
      },
    },
  ],
}

describe('median', () => {
  it('takes the middle value, or the mean of the two middle values, whatever the order', () => {
    expect([median([3, 1, 2]), median([4, 1, 3, 2]), median([7])]).toEqual([2, 2.5, 7])
  })
})

describe('ratios', () => {
  it('divide the peer by dsh for a cost and dsh by the peer for a rate, so that above 1 always means dsh is faster', () => {
    expect([peerOverDsh({}, 120, 40), peerOverDsh({ higherIsBetter: true }, 800_000, 600_000), peerOverDsh({}, undefined, 40), peerOverDsh({}, 10, 0)]).toEqual([
      3,
      0.75,
      undefined,
      undefined,
    ])
  })
})

describe('budget checks', () => {
  it('compares each budgeted dsh median with every limit it has, in scenario and metric order', () => {
    expect(budgetChecks(report)).toEqual([
      { scenario: 'turn-overhead', metric: 'usPerTurn', budget: { op: '<=', limit: 50, source: '§13' }, value: 40, ok: true },
      { scenario: 'growth', metric: 'ratio', budget: { op: '<=', limit: 1.5, source: 'R-PERF-1' }, value: undefined, ok: false },
      { scenario: 'growth', metric: 'heapPerEvent', budget: { op: '<=', limit: 200, source: '§13' }, value: 150, ok: true },
      { scenario: 'growth', metric: 'heapPerEvent', budget: { op: '<=', limit: 145, source: 'issue 18' }, value: 150, ok: false },
      { scenario: 'streaming', metric: 'chunksPerSecond', budget: { op: '>=', limit: 500_000, source: '§13' }, value: 600_000, ok: true },
      { scenario: 'streaming', metric: 'chunksPerSecondJsonl', budget: { op: '>=', limit: 250_000, source: '§13' }, value: 200_000, ok: false },
    ])
  })
})

describe('the done criterion of issue 18', () => {
  it('gives pi / dsh on scenarios 1, 2 and 4 by wall, CPU and steady state, passing on the wall figure', () => {
    expect(criterionChecks(report)).toEqual([
      {
        scenario: 'turn-overhead',
        title: '1. Turn overhead',
        figure: 'per text turn',
        ratio: 3,
        cpuRatio: 100 / 38,
        steadyRatio: 0.8,
        steadyCpuRatio: 1.2,
        goal: 1,
        aim: 1.5,
        pass: true,
        aimMet: true,
      },
      {
        scenario: 'streaming',
        title: '4. Streaming',
        figure: 'chunks per second, no persistence',
        ratio: 0.75,
        cpuRatio: undefined,
        steadyRatio: undefined,
        steadyCpuRatio: undefined,
        goal: 1,
        aim: 1.5,
        pass: false,
        aimMet: false,
      },
    ])
  })
})

describe('markdown', () => {
  it('names extra Node flags in the header line, since their figures are not the standard ones', () => {
    const flagged = markdown({ ...report, nodeFlags: ['--no-turbofan'] }).split('\n')[0]
    expect(flagged).toBe(
      'Measured 2026-11-30 at abc1234 (full mode, 42 s) on Test CPU, 2 cores, 24 GB, linux 6.0, Node v20.20.2 with --no-turbofan; 1-minute load average 1.5 at the start, 2 at the end.',
    )
  })

  it('shows the criterion first, then medians, ratios, budgets, a failed peer and the missed budgets', () => {
    expect(markdown(report).split('\n')).toEqual([
      'Measured 2026-11-30 at abc1234 (full mode, 42 s) on Test CPU, 2 cores, 24 GB, linux 6.0, Node v20.20.2; 1-minute load average 1.5 at the start, 2 at the end.',
      '',
      '**Done criterion (issue 18): pi-agent-core / dsh ≥ 1.0 on scenarios 1, 2 and 4, aim 1.5: 1 of 2 pass** (verdict on the standard wall-time figure; CPU time and steady state beside it; above 1: dsh is faster).',
      '',
      '| Scenario | Figure | pi / dsh (wall) | pi / dsh (CPU) | steady state (wall) | steady state (CPU) | Verdict |',
      '|---|---|---:|---:|---:|---:|---|',
      '| **1. Turn overhead** | per text turn | 3.00× ✅ | 2.63× ✅ | 0.80× ❌ | 1.20× ✅ | ✅ aim met (≥ 1.5) |',
      '| **4. Streaming** | chunks per second, no persistence | 0.75× ❌ | — | — | — | ❌ miss (needs 1.33× faster) |',
      '',
      'Medians of the runs; the ratio columns are peer / dsh for times and memory, dsh / peer for rates (chunks/s): above 1, dsh is faster or smaller.',
      '',
      '| Scenario | Metric | dsh | pi-agent-core | AI SDK | pi / dsh | AI SDK / dsh | Budget (dsh) |',
      '|---|---|---:|---:|---:|---:|---:|---|',
      '| **1. Turn overhead** | per turn (wall) | 40 µs | 120 µs | — | 3.00× |  | ≤ 50 µs ✅ |',
      '|  | per turn (CPU) | 38 µs | 100 µs | — | 2.63× |  |  |',
      '|  | steady state: per turn (wall) | 100 µs | 80 µs | — | 0.80× |  |  |',
      '|  | steady state: per turn (CPU) | 50 µs | 60 µs | — | 1.20× |  |  |',
      '| **3. Growth** | heap per logged event | 150 B |  |  |  |  | ≤ 200 B ✅ · ≤ 145 B (issue 18) ❌ |',
      '| **4. Streaming** | no persistence | 600,000 chunks/s | 800,000 chunks/s |  | 0.75× |  | ≥ 500,000 chunks/s ✅ |',
      '|  | JSONL persistence | 200,000 chunks/s | — |  |  |  | ≥ 250,000 chunks/s ❌ |',
      '',
      '- **1. Turn overhead**: 2,000 turns. Runs: dsh 1, pi-agent-core 1, ai-sdk 0.',
      '  - ai-sdk could not run: Cannot find module ai',
      '- **3. Growth**: 10,000 text turns. Runs: dsh 1.',
      '- **4. Streaming**: one turn of 100,000 text deltas. Runs: dsh 1, pi-agent-core 1.',
      '',
      'Budgets missed: growth ratio (no figure vs <= 1.5); growth heapPerEvent (150.00 vs <= 145, issue 18); streaming chunksPerSecondJsonl (200,000.00 vs >= 250000).',
    ])
  })
})

describe('a skipped scenario', () => {
  const reason = 'DSH_PG_URL is not set: point it at a PostgreSQL database'
  const skippedReport: BenchReport = {
    ...report,
    scenarios: [
      report.scenarios[1]!,
      {
        id: 'session-postgres',
        title: '10. Sessions on PostgreSQL',
        description: 'appends, resume, takeover',
        params: {},
        subjects: { dsh: { runs: [], median: {}, skipped: reason } },
      },
    ],
  }

  it('has its budgets checked as not measured, with the reason, and never among the missed ones', () => {
    const checks = budgetChecks(skippedReport)
    expect(checks.filter((check) => check.scenario === 'session-postgres')).toEqual([
      { scenario: 'session-postgres', metric: 'appendEventsPerSecond', budget: { op: '>=', limit: 50_000, source: 'issue 23' }, value: undefined, ok: false, skipped: reason },
      { scenario: 'session-postgres', metric: 'resumeMs', budget: { op: '<=', limit: 10_000, source: 'issue 23' }, value: undefined, ok: false, skipped: reason },
      { scenario: 'session-postgres', metric: 'peakRssMb', budget: { op: '<=', limit: 400, source: 'issue 23' }, value: undefined, ok: false, skipped: reason },
      { scenario: 'session-postgres', metric: 'takeoverMs', budget: { op: '<=', limit: 5_000, source: 'issue 23' }, value: undefined, ok: false, skipped: reason },
    ])
    expect(missedBudgets(checks).map((check) => `${check.scenario} ${check.metric}`)).toEqual(['growth ratio', 'growth heapPerEvent'])
  })

  it('shows one row with the reason in the table and is named as skipped, not as a missed budget', () => {
    const lines = markdown(skippedReport).split('\n')
    expect(lines.slice(lines.indexOf('| **3. Growth** | heap per logged event | 150 B |  |  |  |  | ≤ 200 B ✅ · ≤ 145 B (issue 18) ❌ |'))).toEqual([
      '| **3. Growth** | heap per logged event | 150 B |  |  |  |  | ≤ 200 B ✅ · ≤ 145 B (issue 18) ❌ |',
      `| **10. Sessions on PostgreSQL** | skipped: ${reason} | — |  |  |  |  | not measured |`,
      '',
      '- **3. Growth**: 10,000 text turns. Runs: dsh 1.',
      '- **10. Sessions on PostgreSQL**: appends, resume, takeover. Runs: dsh 0.',
      `  - dsh skipped: ${reason}`,
      '',
      'Budgets missed: growth ratio (no figure vs <= 1.5); growth heapPerEvent (150.00 vs <= 145, issue 18).',
      `Skipped, budgets not measured: session-postgres (${reason}).`,
    ])
  })

  it('leaves "every budget measured is met" when nothing measured missed', () => {
    const only = { ...skippedReport, scenarios: [skippedReport.scenarios[1]!] }
    expect(markdown(only).split('\n').slice(-2)).toEqual(['Every budget measured is met.', `Skipped, budgets not measured: session-postgres (${reason}).`])
  })
})

describe('command-line values', () => {
  it('reads --node as a major to fetch or as the path of an existing binary', () => {
    expect([parseNodeOption('24'), parseNodeOption('v22'), parseNodeOption('/opt/node/bin/node', () => true)]).toEqual([
      { kind: 'major', major: '24' },
      { kind: 'major', major: '22' },
      { kind: 'path', path: '/opt/node/bin/node' },
    ])
    expect(() => parseNodeOption('/nowhere/node', () => false)).toThrow('--node /nowhere/node: no such file; give the path of a Node binary or a major version (e.g. --node 24)')
    expect(() => parseNodeOption(' ')).toThrow('--node needs a path to a Node binary or a major version (e.g. --node 24)')
  })

  it('accepts only positive integers for counts, naming the flag otherwise', () => {
    expect(positiveInteger('--stream-batch', '16')).toBe(16)
    for (const bad of ['0', '-3', '1.5', 'many']) expect(() => positiveInteger('--stream-batch', bad)).toThrow(`--stream-batch must be a positive integer (got ${bad})`)
  })
})
