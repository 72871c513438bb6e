/**
 * Scenario 1, turn overhead (spec §13: ≤ 50 µs per text turn). One agent
 * answers `turns` follow-ups in a row, each with a 20-delta text answer from a
 * zero-latency model; the figure is wall (and CPU) time per turn, after a
 * warm-up on another agent so that the JIT has compiled the hot paths.
 */
import { defineScenario } from '../lib/scenario.ts'
import { timeTurns } from '../subjects/turn-driver.ts'

interface Params {
  turns: number
  warmup: number
}

export default defineScenario<Params>({
  id: 'turn-overhead',
  title: '1. Turn overhead',
  describe: (p) => `${p.turns.toLocaleString('en-US')} turns on one agent, each a follow-up answered by 20 text deltas (after ${p.warmup} warm-up turns)`,
  subjects: ['dsh', 'pi-agent-core', 'ai-sdk'],
  metrics: [
    { key: 'usPerTurn', label: 'per turn (wall)', unit: 'µs', digits: 0, compare: true, budget: { op: '<=', limit: 50, source: '§13' } },
    { key: 'cpuUsPerTurn', label: 'per turn (CPU)', unit: 'µs', digits: 0, compare: true },
  ],
  params: (mode) => (mode === 'full' ? { turns: 2000, warmup: 200 } : { turns: 20, warmup: 5 }),
  // The AI SDK's turns grow with the history (see docs/benchmarks.md): one of its runs takes minutes.
  runs: (mode, subject) => (mode === 'smoke' ? 1 : subject === 'ai-sdk' ? 1 : 5),
  run: (subject, params) => timeTurns(subject, {}, params),
})
