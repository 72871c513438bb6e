/**
 * Drives ordinary turns on any subject: `count` follow-ups in a row on a new
 * agent, each answered either with the 20-delta text or with a step of
 * `toolCalls` no-op calls then that text. Subjects are imported lazily so that
 * a run loads only its own library.
 */
import { timed, type Timing } from '../lib/measure.ts'
import type { Metrics, SubjectId } from '../lib/scenario.ts'
import { NOOP_TOOL, prompt } from './workload.ts'

export interface TurnWorkload {
  /** No-op tool calls in each turn's first step; 0 or absent: a text answer only. */
  toolCalls?: number
}

export interface TurnDriver {
  /** Creates agent `agentIndex` and runs `count` turns on it (what is timed). */
  run(agentIndex: number, count: number): Promise<void>
  /** Lets go of every agent created so far (dsh: disposes them), outside the timed region. */
  release(): Promise<void>
}

export async function turnDriver(subject: SubjectId, workload: TurnWorkload): Promise<TurnDriver> {
  const calls = workload.toolCalls ?? 0
  if (subject === 'dsh') {
    const dsh = await import('./dsh.ts')
    const spine = await dsh.spine(calls ? { respond: dsh.toolRoundResponder(NOOP_TOOL, calls), tools: [dsh.noopTool] } : { respond: dsh.answerResponder })
    const handles: Array<{ dispose(): Promise<void> }> = []
    return {
      async run(agentIndex, count) {
        const handle = await spine.create(`bench-${agentIndex}`)
        handles.push(handle)
        for (let i = 0; i < count; i++) await dsh.turn(handle.agent, prompt(i))
      },
      async release() {
        for (const handle of handles.splice(0)) await handle.dispose()
      },
    }
  }
  if (subject === 'pi-agent-core') {
    const pi = await import('./pi.ts')
    return {
      async run(_, count) {
        const agent = calls ? pi.agent(pi.toolRound(NOOP_TOOL, calls), [pi.noopTool]) : pi.agent(() => pi.ANSWER)
        for (let i = 0; i < count; i++) await agent.prompt(prompt(i))
      },
      release: async () => {},
    }
  }
  const ai = await import('./ai-sdk.ts')
  return {
    async run(_, count) {
      const conversation = calls ? new ai.Conversation(ai.mockModel(ai.toolRound(NOOP_TOOL, calls)), ai.noopTools) : new ai.Conversation(ai.mockModel(() => ai.ANSWER))
      for (let i = 0; i < count; i++) await conversation.turn(prompt(i))
    },
    release: async () => {},
  }
}

export interface TurnParams {
  turns: number
  warmup: number
  /**
   * Rounds of `turns` turns, each on a new agent, in one process: the first
   * is the standard (cold) figure, the last the steady-state one. 1: no
   * steady-state figure.
   */
  rounds: number
}

/**
 * Warms up on one agent, then times `rounds` rounds of `turns` turns, each on
 * a new agent: wall and CPU µs per turn and minor page faults of the first
 * round (`usPerTurn`, `cpuUsPerTurn`, `faults`) and, with more than one round,
 * wall and CPU of the last (`steadyUsPerTurn`, `steadyCpuUsPerTurn`).
 */
export async function timeTurns(subject: SubjectId, workload: TurnWorkload, params: TurnParams): Promise<Metrics> {
  const driver = await turnDriver(subject, workload)
  await driver.run(0, params.warmup)
  const perTurn = (time: Timing) => ({ wall: (time.wallMs * 1000) / params.turns, cpu: (time.cpuMs * 1000) / params.turns, faults: time.faults })
  const results: Array<ReturnType<typeof perTurn>> = []
  for (let round = 1; round <= params.rounds; round++) {
    await driver.release()
    results.push(perTurn(await timed(() => driver.run(round, params.turns))))
  }
  const cold = results[0]!
  const metrics: Metrics = { usPerTurn: cold.wall, cpuUsPerTurn: cold.cpu, faults: cold.faults }
  if (results.length > 1) {
    const steady = results[results.length - 1]!
    metrics.steadyUsPerTurn = steady.wall
    metrics.steadyCpuUsPerTurn = steady.cpu
  }
  return metrics
}
