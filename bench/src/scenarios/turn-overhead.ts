/**
 * Scenario 1, turn overhead (spec §13: ≤ 50 µs per text turn). One agent
 * answers `turns` follow-ups in a row, each with a 20-delta text answer from a
 * zero-latency model; the figure is wall (and CPU) time per turn, after a
 * warm-up on another agent so that the JIT has compiled the hot paths.
 */
import { defineScenario, type Metrics, type SubjectId } from '../lib/scenario.ts'
import { timed } from '../lib/measure.ts'
import { prompt } from '../subjects/workload.ts'

interface Params {
  turns: number
  warmup: number
}

/** Runs `turns` text turns on a fresh agent of `subject` after a warm-up; returns µs per turn. */
async function textTurns(subject: SubjectId, params: Params): Promise<Metrics> {
  let drive: (agentIndex: number, count: number) => Promise<void>
  if (subject === 'dsh') {
    const dsh = await import('../subjects/dsh.ts')
    const spine = await dsh.spine({ respond: dsh.answerResponder })
    drive = async (agentIndex, count) => {
      const { agent } = await spine.create(`bench-${agentIndex}`)
      for (let i = 0; i < count; i++) await dsh.turn(agent, prompt(i))
    }
  } else if (subject === 'pi-agent-core') {
    const pi = await import('../subjects/pi.ts')
    drive = async (_, count) => {
      const agent = pi.agent(() => pi.ANSWER)
      for (let i = 0; i < count; i++) await agent.prompt(prompt(i))
    }
  } else {
    const ai = await import('../subjects/ai-sdk.ts')
    drive = async (_, count) => {
      const conversation = new ai.Conversation(ai.mockModel(() => ai.ANSWER))
      for (let i = 0; i < count; i++) await conversation.turn(prompt(i))
    }
  }
  await drive(0, params.warmup)
  const time = await timed(() => drive(1, params.turns))
  return { usPerTurn: (time.wallMs * 1000) / params.turns, cpuUsPerTurn: (time.cpuMs * 1000) / params.turns }
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
  run: textTurns,
})
