/**
 * Scenario 5, parallel tools (spec §13: a step of 10 concurrency-safe tools
 * of 50 ms each finishes in ≤ 1.1× one tool). Each turn's first step calls
 * `calls` tools that each wait 50 ms; the step's wall time is measured from
 * the start of the turn to the end of that first step (dsh: `step/end` of
 * step 1; pi-agent-core: its first `turn_end`; AI SDK: its first
 * `onStepFinish`). The figure is the median over `turns` turns, and its
 * ratio to one tool's 50 ms.
 */
import { defineScenario, type Metrics, type SubjectId } from '../lib/scenario.ts'
import { median } from '../lib/measure.ts'
import { SLOW_TOOL, SLOW_TOOL_MS, prompt } from '../subjects/workload.ts'

interface Params {
  calls: number
  turns: number
}

/** Returns a function that runs one turn and resolves with its first step's wall time in ms. */
async function stepTimer(subject: SubjectId, calls: number): Promise<(i: number) => Promise<number>> {
  if (subject === 'dsh') {
    const dsh = await import('../subjects/dsh.ts')
    const spine = await dsh.spine({ respond: dsh.toolRoundResponder(SLOW_TOOL, calls), tools: [dsh.slowTool] })
    const { agent } = await spine.create('bench-parallel')
    let stepEnd = 0
    spine.root.on('session/event', (_session, event) => {
      if (event.type === 'step/end' && event.data.step === 1) stepEnd = performance.now()
    })
    return async (i) => {
      const t0 = performance.now()
      await dsh.turn(agent, prompt(i))
      return stepEnd - t0
    }
  }
  if (subject === 'pi-agent-core') {
    const pi = await import('../subjects/pi.ts')
    const agent = pi.agent(pi.toolRound(SLOW_TOOL, calls), [pi.slowTool])
    let firstEnd = 0
    agent.subscribe((event) => {
      if (event.type === 'turn_end' && firstEnd === 0) firstEnd = performance.now()
    })
    return async (i) => {
      firstEnd = 0
      const t0 = performance.now()
      await agent.prompt(prompt(i))
      return firstEnd - t0
    }
  }
  const ai = await import('../subjects/ai-sdk.ts')
  const conversation = new ai.Conversation(ai.mockModel(ai.toolRound(SLOW_TOOL, calls)), ai.slowTools)
  return async (i) => {
    let firstEnd = 0
    const t0 = performance.now()
    await conversation.turn(prompt(i), () => {
      if (firstEnd === 0) firstEnd = performance.now()
    })
    return firstEnd - t0
  }
}

async function parallelTools(subject: SubjectId, params: Params): Promise<Metrics> {
  const step = await stepTimer(subject, params.calls)
  await step(0) // warm-up
  const times: number[] = []
  for (let i = 1; i <= params.turns; i++) {
    const ms = await step(i)
    if (!(ms > 0)) throw new Error(`turn ${i}: no end of the first step was observed`)
    times.push(ms)
  }
  const stepMs = median(times)
  return { stepMs, ratio: stepMs / SLOW_TOOL_MS }
}

export default defineScenario<Params>({
  id: 'parallel-tools',
  title: '5. Parallel tools',
  describe: (p) => `${p.calls} concurrency-safe tools of ${SLOW_TOOL_MS} ms in one step; median step wall time over ${p.turns} turns`,
  subjects: ['dsh', 'pi-agent-core', 'ai-sdk'],
  metrics: [
    { key: 'stepMs', label: 'step wall time', unit: 'ms', digits: 1, compare: true },
    { key: 'ratio', label: `step / one tool (${SLOW_TOOL_MS} ms)`, unit: '×', digits: 3, compare: false, budget: { op: '<=', limit: 1.1, source: '§13' } },
  ],
  params: (mode) => ({ calls: 10, turns: mode === 'full' ? 10 : 2 }),
  runs: (mode) => (mode === 'full' ? 5 : 1),
  run: parallelTools,
})
