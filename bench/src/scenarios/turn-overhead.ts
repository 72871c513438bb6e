/**
 * Scenario 1, turn overhead (docs/contracts.md#budgets: ≤ 50 µs per text
 * turn). One agent answers `turns` follow-ups in a row, each with a 20-delta
 * text answer from a zero-latency model; the figure is wall (and CPU) time
 * per turn, after a warm-up on another agent so that the JIT has compiled the
 * hot paths. That standard (cold) figure is then measured again `rounds - 1`
 * times in the same process, each round on a new agent: the last round is the
 * steady state of a process that has run thousands of turns.
 */
import { COLD_ROUND_METRICS } from '../lib/measure.ts'
import { defineScenario } from '../lib/scenario.ts'
import { timeTurns, type TurnParams } from '../subjects/turn-driver.ts'

export default defineScenario<TurnParams>({
  id: 'turn-overhead',
  title: '1. Turn overhead',
  describe: (p) =>
    `${p.turns.toLocaleString('en-US')} turns on one agent, each a follow-up answered by 20 text deltas (after ${p.warmup} warm-up turns); steady state: round ${p.rounds} of ${p.rounds} such rounds in one process, each on a new agent (not the AI SDK)`,
  subjects: ['dsh', 'pi-agent-core', 'ai-sdk'],
  metrics: [
    { key: 'usPerTurn', label: 'per turn (wall)', unit: 'µs', digits: 0, compare: true, budget: { op: '<=', limit: 50, source: '§13' } },
    { key: 'cpuUsPerTurn', label: 'per turn (CPU)', unit: 'µs', digits: 0, compare: true },
    { key: 'steadyUsPerTurn', label: 'steady state: per turn (wall)', unit: 'µs', digits: 0, compare: true },
    { key: 'steadyCpuUsPerTurn', label: 'steady state: per turn (CPU)', unit: 'µs', digits: 0, compare: true },
    ...COLD_ROUND_METRICS,
  ],
  criterion: { label: 'per text turn', wall: 'usPerTurn', cpu: 'cpuUsPerTurn', steadyWall: 'steadyUsPerTurn', steadyCpu: 'steadyCpuUsPerTurn' },
  params: (mode) => (mode === 'full' ? { turns: 2000, warmup: 200, rounds: 5 } : { turns: 20, warmup: 5, rounds: 2 }),
  // The AI SDK's turns grow with the history (see docs/benchmarks.md): one of its runs takes minutes.
  runs: (mode, subject) => (mode === 'smoke' ? 1 : subject === 'ai-sdk' ? 1 : 5),
  // The AI SDK runs the standard round only: its cost is its history's, not warm-up's, and a round takes about 40 s.
  run: (subject, params) => timeTurns(subject, {}, subject === 'ai-sdk' ? { ...params, rounds: 1 } : params),
})
