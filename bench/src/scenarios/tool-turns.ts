/**
 * Scenario 2, tool turns (spec §13: ≤ 150 µs per turn). Each turn is a step
 * in which the model calls 4 concurrency-safe no-op tools, then a step that
 * answers with 20 text deltas; wall (and CPU) time per turn after a warm-up.
 */
import { defineScenario } from '../lib/scenario.ts'
import { timeTurns } from '../subjects/turn-driver.ts'

interface Params {
  turns: number
  warmup: number
  calls: number
}

export default defineScenario<Params>({
  id: 'tool-turns',
  title: '2. Tool turns',
  describe: (p) =>
    `${p.turns.toLocaleString('en-US')} turns on one agent, each a step of ${p.calls} concurrency-safe no-op tool calls then a 20-delta text answer (after ${p.warmup} warm-up turns)`,
  subjects: ['dsh', 'pi-agent-core', 'ai-sdk'],
  metrics: [
    { key: 'usPerTurn', label: 'per turn (wall)', unit: 'µs', digits: 0, compare: true, budget: { op: '<=', limit: 150, source: '§13' } },
    { key: 'cpuUsPerTurn', label: 'per turn (CPU)', unit: 'µs', digits: 0, compare: true },
  ],
  params: (mode) => (mode === 'full' ? { turns: 1000, warmup: 100, calls: 4 } : { turns: 10, warmup: 3, calls: 4 }),
  // The AI SDK's turns grow with the history (see docs/benchmarks.md): one of its runs takes minutes.
  runs: (mode, subject) => (mode === 'smoke' ? 1 : subject === 'ai-sdk' ? 1 : 5),
  run: (subject, params) => timeTurns(subject, { toolCalls: params.calls }, params),
})
