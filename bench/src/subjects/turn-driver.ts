/**
 * Drives ordinary turns on any subject: a fresh agent per call of the
 * returned function, `count` follow-ups in a row, each answered either with
 * the 20-delta text or with a step of `toolCalls` no-op calls then that text.
 * Subjects are imported lazily so that a run loads only its own library.
 */
import { timed } from '../lib/measure.ts'
import type { Metrics, SubjectId } from '../lib/scenario.ts'
import { NOOP_TOOL, prompt } from './workload.ts'

export interface TurnWorkload {
  /** No-op tool calls in each turn's first step; 0 or absent: a text answer only. */
  toolCalls?: number
}

/** Returns `drive(agentIndex, count)`: runs `count` turns on a new agent of `subject`. */
export async function turnDriver(subject: SubjectId, workload: TurnWorkload): Promise<(agentIndex: number, count: number) => Promise<void>> {
  const calls = workload.toolCalls ?? 0
  if (subject === 'dsh') {
    const dsh = await import('./dsh.ts')
    const spine = await dsh.spine(calls ? { respond: dsh.toolRoundResponder(NOOP_TOOL, calls), tools: [dsh.noopTool] } : { respond: dsh.answerResponder })
    return async (agentIndex, count) => {
      const { agent } = await spine.create(`bench-${agentIndex}`)
      for (let i = 0; i < count; i++) await dsh.turn(agent, prompt(i))
    }
  }
  if (subject === 'pi-agent-core') {
    const pi = await import('./pi.ts')
    return async (_, count) => {
      const agent = calls ? pi.agent(pi.toolRound(NOOP_TOOL, calls), [pi.noopTool]) : pi.agent(() => pi.ANSWER)
      for (let i = 0; i < count; i++) await agent.prompt(prompt(i))
    }
  }
  const ai = await import('./ai-sdk.ts')
  return async (_, count) => {
    const conversation = calls ? new ai.Conversation(ai.mockModel(ai.toolRound(NOOP_TOOL, calls)), ai.noopTools) : new ai.Conversation(ai.mockModel(() => ai.ANSWER))
    for (let i = 0; i < count; i++) await conversation.turn(prompt(i))
  }
}

/** Warms up on one agent, then times `turns` turns on another: wall and CPU µs per turn. */
export async function timeTurns(subject: SubjectId, workload: TurnWorkload, params: { turns: number; warmup: number }): Promise<Metrics> {
  const drive = await turnDriver(subject, workload)
  await drive(0, params.warmup)
  const time = await timed(() => drive(1, params.turns))
  return { usPerTurn: (time.wallMs * 1000) / params.turns, cpuUsPerTurn: (time.cpuMs * 1000) / params.turns }
}
