/**
 * Scenario 2, tool turns (docs/contracts.md#budgets: ≤ 150 µs per turn). Each
 * turn is a step in which the model calls 4 concurrency-safe no-op tools,
 * then a step that answers with 20 text deltas; wall (and CPU) time per turn
 * after a warm-up. As in scenario 1, the last of `rounds` rounds (each on a
 * new agent, in the same process) is the steady-state figure.
 */
import { COLD_ROUND_METRICS } from '../lib/measure.ts'
import { defineScenario } from '../lib/scenario.ts'
import { timeTurns, type TurnParams } from '../subjects/turn-driver.ts'

interface Params extends TurnParams {
  calls: number
}

export default defineScenario<Params>({
  id: 'tool-turns',
  title: '2. Tool turns',
  describe: (p) =>
    `${p.turns.toLocaleString('en-US')} turns on one agent, each a step of ${p.calls} concurrency-safe no-op tool calls then a 20-delta text answer (after ${p.warmup} warm-up turns); steady state: round ${p.rounds} of ${p.rounds} such rounds in one process, each on a new agent (not the AI SDK)`,
  subjects: ['dsh', 'pi-agent-core', 'ai-sdk'],
  metrics: [
    { key: 'usPerTurn', label: 'per turn (wall)', unit: 'µs', digits: 0, compare: true, budget: { op: '<=', limit: 150, source: '§13' } },
    { key: 'cpuUsPerTurn', label: 'per turn (CPU)', unit: 'µs', digits: 0, compare: true },
    { key: 'steadyUsPerTurn', label: 'steady state: per turn (wall)', unit: 'µs', digits: 0, compare: true },
    { key: 'steadyCpuUsPerTurn', label: 'steady state: per turn (CPU)', unit: 'µs', digits: 0, compare: true },
    ...COLD_ROUND_METRICS,
  ],
  criterion: { label: 'per tool turn', wall: 'usPerTurn', cpu: 'cpuUsPerTurn', steadyWall: 'steadyUsPerTurn', steadyCpu: 'steadyCpuUsPerTurn' },
  params: (mode) => (mode === 'full' ? { turns: 1000, warmup: 100, calls: 4, rounds: 5 } : { turns: 10, warmup: 3, calls: 4, rounds: 2 }),
  // The AI SDK's turns grow with the history (see docs/benchmarks.md): one of its runs takes minutes.
  runs: (mode, subject) => (mode === 'smoke' ? 1 : subject === 'ai-sdk' ? 1 : 5),
  // The AI SDK runs the standard round only: its cost is its history's, not warm-up's, and a round takes minutes.
  run: (subject, params) => timeTurns(subject, { toolCalls: params.calls }, subject === 'ai-sdk' ? { ...params, rounds: 1 } : params),
})
