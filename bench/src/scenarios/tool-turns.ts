/**
 * Scenario 2, tool turns (spec §13: ≤ 150 µs per turn). Each turn is a step
 * in which the model calls 4 concurrency-safe no-op tools, then a step that
 * answers with 20 text deltas; wall (and CPU) time per turn after a warm-up.
 */
import { defineScenario, type Metrics, type SubjectId } from '../lib/scenario.ts'
import { timed } from '../lib/measure.ts'
import { NOOP_TOOL, prompt } from '../subjects/workload.ts'

interface Params {
  turns: number
  warmup: number
  calls: number
}

async function toolTurns(subject: SubjectId, params: Params): Promise<Metrics> {
  let drive: (agentIndex: number, count: number) => Promise<void>
  if (subject === 'dsh') {
    const dsh = await import('../subjects/dsh.ts')
    const spine = await dsh.spine({ respond: dsh.toolRoundResponder(NOOP_TOOL, params.calls), tools: [dsh.noopTool] })
    drive = async (agentIndex, count) => {
      const { agent } = await spine.create(`bench-${agentIndex}`)
      for (let i = 0; i < count; i++) await dsh.turn(agent, prompt(i))
    }
  } else if (subject === 'pi-agent-core') {
    const pi = await import('../subjects/pi.ts')
    drive = async (_, count) => {
      const agent = pi.agent(pi.toolRound(NOOP_TOOL, params.calls), [pi.noopTool])
      for (let i = 0; i < count; i++) await agent.prompt(prompt(i))
    }
  } else {
    const ai = await import('../subjects/ai-sdk.ts')
    drive = async (_, count) => {
      const conversation = new ai.Conversation(ai.mockModel(ai.toolRound(NOOP_TOOL, params.calls)), ai.noopTools)
      for (let i = 0; i < count; i++) await conversation.turn(prompt(i))
    }
  }
  await drive(0, params.warmup)
  const time = await timed(() => drive(1, params.turns))
  return { usPerTurn: (time.wallMs * 1000) / params.turns, cpuUsPerTurn: (time.cpuMs * 1000) / params.turns }
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
  run: toolTurns,
})
