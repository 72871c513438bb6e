import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { Agent, AgentError } from '@deepseek-ai/dsh-agent'
import type { LlmRequest } from '@deepseek-ai/dsh-llm'
import type { ScriptReply, ScriptToolCall } from '@deepseek-ai/dsh-llm-scripted'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { assertProperty } from './property/driver'
import { echo, refusingLog, spine, type AppendAttempt } from '@deepseek-ai/dsh-testkit'

/**
 * Property (issue 15, contracts §1): a refused append at any point of a turn
 * still ends with the turn closed where the log allows it, an idle agent,
 * one `agent/error` with `APPEND_REFUSED`, every later admission refused with
 * that code, nothing written again, and no spinning.
 *
 * Each run first plays a random program (model replies with text, reasoning
 * and tool rounds; tools that answer, defer a context or inject; steering
 * that arrives mid-stream; one or two prompts) on an agent whose log refuses
 * nothing, to count its appends; then plays it again on a fresh agent whose
 * log refuses exactly one append, chosen at random among them.
 *
 * "Where the log allows it": after a refused `tool/call` or `tool/result` the
 * step cannot close (every call needs both, in model order), after a refused
 * `step/end` the turn cannot, and a refused `turn/end` is not written again;
 * in those cases the turn stays open in the log (a resume repairs it as
 * `interrupted`). Any other refusal inside a turn ends it
 * `error APPEND_REFUSED`.
 */

type ToolName = 'echo' | 'note' | 'injector'

interface Program {
  replies: Array<{ text: boolean; reasoning: boolean; calls: ToolName[] }>
  prompts: number
  steerOnChunk: boolean
  maxParallelToolCalls: number
  /** Which append is refused, in millionths of the appends the program makes. */
  at: number
}

const program: fc.Arbitrary<Program> = fc.record({
  replies: fc.array(
    fc.record({
      text: fc.boolean(),
      reasoning: fc.boolean(),
      calls: fc.array(fc.constantFrom<ToolName>('echo', 'echo', 'note', 'injector'), { maxLength: 3 }),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  prompts: fc.integer({ min: 1, max: 2 }),
  steerOnChunk: fc.boolean(),
  maxParallelToolCalls: fc.constantFrom(1, 10),
  // An integer, not a double: fast-check's doubles cluster at 0 and 1, which would pick the first and last append.
  at: fc.integer({ min: 0, max: 999_999 }),
})

/** Step-bound types after whose refusal the step (or the turn) cannot close in the log. */
const UNCLOSABLE = new Set(['tool/call', 'tool/result', 'step/end', 'turn/end'])

interface Played {
  agent: Agent
  attempts: readonly AppendAttempt[]
  runaway: boolean
  errors: Array<{ turn: number; step: number | undefined; code: unknown }>
  /** Where the log stood when the refused append was attempted. */
  atRefusal: { openTurn: number | undefined; openStep: number | undefined; lastTurn: number } | undefined
  dispose: () => Promise<void>
}

async function play(p: Program, refuseAttempt: number | undefined): Promise<Played> {
  let agent!: Agent
  const note = defineTool({
    name: 'note',
    description: 'Runs alone and defers a context.',
    parameters: z.object({}),
    execute: (_args, run) => {
      run.deferContext({ label: 'note', content: 'a deferred context' })
      return 'noted'
    },
  })
  const injector = defineTool({
    name: 'injector',
    description: 'Injects a context while its step is open.',
    parameters: z.object({}),
    isConcurrencySafe: () => true,
    execute: () => {
      try {
        agent.inject('an injected context')
      } catch {
        // Refused once the agent failed: the tool still answers.
      }
      return 'injected'
    },
  })
  const replies = p.replies.map((reply, i): ScriptReply => ({
    ...(reply.reasoning ? { reasoning: `thinking ${i}` } : {}),
    ...(reply.text || reply.calls.length === 0 ? { text: `answer ${i} in words` } : {}),
    ...(reply.calls.length ? { toolCalls: reply.calls.map((name): ScriptToolCall => ({ name, arguments: name === 'echo' ? { text: `e${i}` } : {} })) } : {}),
  }))
  const { root, handles } = await spine({
    model: { respond: (_request: LlmRequest, index: number) => replies[index] ?? 'the last answer' },
    tools: [echo, note, injector],
    maxParallelToolCalls: p.maxParallelToolCalls,
  })
  agent = await (async () => {
    const handle = await root.agents.create({ sessionId: 'prop' as never, agentOptions: { provider: 'scripted', model: 'test-model' } })
    handles.push(handle)
    return handle.agent
  })()
  const errors: Played['errors'] = []
  root.on('agent/error', (_agent, turn, step, error) => void errors.push({ turn, step, code: (error as AgentError).code }))
  let atRefusal: Played['atRefusal']
  const log = refusingLog(agent, (_type, _data, attempt) => {
    if (attempt !== refuseAttempt) return false
    const position = agent.session.position
    atRefusal = { openTurn: position.openTurn?.turn, openStep: position.openStep?.step, lastTurn: position.lastTurn }
    return true
  })
  if (p.steerOnChunk) {
    let steered = false
    root.on('session/event', (_session, event) => {
      if (steered || event.type !== 'assistant/chunk') return
      steered = true
      agent.steer('steering mid-stream')
    })
  }
  for (let i = 0; i < p.prompts; i++) {
    try {
      agent.followup(`prompt ${i}`)
    } catch {
      // The refused append may be this admission's own inbox/enqueue.
    }
  }
  await agent.whenIdle()
  return {
    agent,
    attempts: log.attempts,
    get runaway() {
      return log.runaway
    },
    errors,
    get atRefusal() {
      return atRefusal
    },
    dispose: () => handles[0]!.dispose(),
  }
}

/** The refused attempt is never made again (for the anchor: no other anchor of its step either). */
function rewrites(attempts: readonly AppendAttempt[], refused: number): AppendAttempt[] {
  const first = attempts[refused]!
  const step = (data: unknown) => {
    const d = data as { turn?: number; step?: number }
    return `${d.turn}.${d.step}`
  }
  return attempts.slice(refused + 1).filter((attempt) => {
    if (attempt.type !== first.type) return false
    if (isDeepStrictEqual(attempt.data, first.data)) return true
    return first.type === 'assistant/message' && step(attempt.data) === step(first.data)
  })
}

async function check(p: Program): Promise<void> {
  const dry = await play(p, undefined)
  const total = dry.attempts.length
  await dry.dispose()
  const refused = Math.floor((p.at / 1_000_000) * total)
  const run = await play(p, refused)
  try {
    expect(run.runaway).toBe(false)
    const attempt = run.attempts[refused]!
    expect(attempt.refused).toBe(true)
    const agent = run.agent
    expect(agent.status).toBe('idle')
    const at = run.atRefusal!
    // One report: the turn that was open in the log (else the last one), and the step the loop had open.
    const step = attempt.type === 'step/start' ? (attempt.data as { step: number }).step : at.openStep
    expect(run.errors).toEqual([{ turn: at.openTurn ?? at.lastTurn, step, code: 'APPEND_REFUSED' }])
    expect(rewrites(run.attempts, refused)).toEqual([])

    const open = agent.session.position.openTurn?.turn
    if (at.openTurn === undefined) {
      // Outside a turn (an admission, a claim, turn/start): no turn is open, and none was opened.
      expect(open).toBeUndefined()
      expect(agent.session.position.lastTurn).toBe(at.lastTurn)
    } else if (UNCLOSABLE.has(attempt.type)) {
      expect(open).toBe(at.openTurn)
    } else {
      expect(open).toBeUndefined()
      const end = agent.session.events.findLast((event) => event.type === 'turn/end')
      expect(end?.type === 'turn/end' && [end.data.turn, end.data.reason.kind, end.data.reason.kind === 'error' && end.data.reason.failure.code]).toEqual([
        at.openTurn,
        'error',
        'APPEND_REFUSED',
      ])
    }

    // Every later admission and runMaintenance is refused with the code, and nothing more is written.
    const length = agent.session.events.length
    for (const admit of [() => agent.followup('late'), () => agent.queue('late'), () => agent.steer('late'), () => agent.inject('late')]) {
      expect(admit).toThrow(expect.objectContaining({ code: 'APPEND_REFUSED' }))
    }
    await expect(agent.runMaintenance(async () => 'ran')).rejects.toMatchObject({ code: 'APPEND_REFUSED' })
    await new Promise((resolve) => setImmediate(resolve))
    expect(agent.session.events.length).toBe(length)
    expect(agent.status).toBe('idle')
    // Dispose settles and writes nothing of a failed agent's own (its pending items stay pending).
    await run.dispose()
    expect(agent.session.events.length).toBe(length)
  } finally {
    await run.dispose()
  }
}

describe('the refused-write rule, at any point of a turn (property)', () => {
  it(
    'a refused append at any point closes the turn where the log allows, leaves the agent idle and failed with APPEND_REFUSED, and never spins',
    () => assertProperty('refused append', fc.asyncProperty(program, check), 150),
    240_000,
  )
})
