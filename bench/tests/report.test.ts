import { describe, expect, it } from 'vitest'
import { median } from '../src/lib/measure.ts'
import { budgetChecks, markdown } from '../src/report.ts'
import type { BenchReport } from '../src/run-bench.ts'

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
      params: { turns: 2000, warmup: 200 },
      subjects: {
        dsh: { runs: [{ usPerTurn: 40, cpuUsPerTurn: 38 }], median: { usPerTurn: 40, cpuUsPerTurn: 38 } },
        'pi-agent-core': { runs: [{ usPerTurn: 120, cpuUsPerTurn: 100 }], median: { usPerTurn: 120, cpuUsPerTurn: 100 } },
        'ai-sdk': { runs: [], median: {}, error: 'Cannot find module ai\nstack…' },
      },
    },
    {
      id: 'streaming',
      title: '4. Streaming',
      description: 'one turn of 100,000 text deltas',
      params: { chunks: 100_000 },
      subjects: { dsh: { runs: [{ chunksPerSecond: 600_000, chunksPerSecondJsonl: 200_000 }], median: { chunksPerSecond: 600_000, chunksPerSecondJsonl: 200_000 } } },
    },
  ],
}

describe('median', () => {
  it('takes the middle value, or the mean of the two middle values, whatever the order', () => {
    expect([median([3, 1, 2]), median([4, 1, 3, 2]), median([7])]).toEqual([2, 2.5, 7])
  })
})

describe('budget checks', () => {
  it('compares each budgeted dsh median with its §13 limit, in scenario and metric order', () => {
    expect(budgetChecks(report)).toEqual([
      { scenario: 'turn-overhead', metric: 'usPerTurn', budget: { op: '<=', limit: 50, source: '§13' }, value: 40, ok: true },
      { scenario: 'streaming', metric: 'chunksPerSecond', budget: { op: '>=', limit: 500_000, source: '§13' }, value: 600_000, ok: true },
      { scenario: 'streaming', metric: 'chunksPerSecondJsonl', budget: { op: '>=', limit: 250_000, source: '§13' }, value: 200_000, ok: false },
    ])
  })
})

describe('markdown table', () => {
  it('shows medians, peer / dsh ratios, budgets, a failed peer and the missed budgets', () => {
    expect(markdown(report).split('\n')).toEqual([
      'Measured 2026-11-30 at abc1234 (full mode, 42 s) on Test CPU, 2 cores, 24 GB, linux 6.0, Node v20.20.2; 1-minute load average 1.5 at the start, 2 at the end.',
      '',
      'Medians of the runs; the ratio columns are peer / dsh (above 1: dsh is faster or smaller).',
      '',
      '| Scenario | Metric | dsh | pi-agent-core | AI SDK | pi / dsh | AI SDK / dsh | Budget (dsh) |',
      '|---|---|---:|---:|---:|---:|---:|---|',
      '| **1. Turn overhead** | per turn (wall) | 40 µs | 120 µs | — | 3.00× |  | ≤ 50 µs ✅ |',
      '|  | per turn (CPU) | 38 µs | 100 µs | — | 2.63× |  |  |',
      '| **4. Streaming** | no persistence | 600,000 chunks/s |  |  |  |  | ≥ 500,000 chunks/s ✅ |',
      '|  | JSONL persistence | 200,000 chunks/s |  |  |  |  | ≥ 250,000 chunks/s ❌ |',
      '',
      '- **1. Turn overhead**: 2,000 turns. Runs: dsh 1, pi-agent-core 1, ai-sdk 0.',
      '  - ai-sdk could not run: Cannot find module ai',
      '- **4. Streaming**: one turn of 100,000 text deltas. Runs: dsh 1.',
      '',
      'Budgets missed: streaming chunksPerSecondJsonl (200,000.00 vs >= 250000).',
    ])
  })
})
