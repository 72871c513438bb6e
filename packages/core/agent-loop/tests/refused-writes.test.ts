import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { AgentError, type Agent } from '@deepseek-ai/dsh-agent'
import { MemorySessionPersistence, SessionError, SessionId, memoryPersistence } from '@deepseek-ai/dsh-session'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { deferred, echo, refusingLog, spine, trace } from '@deepseek-ai/dsh-testkit'

/**
 * The refused-write rule (issues 14.1 and 15.1, contracts §1): when the log
 * refuses an append (`APPEND_REFUSED`) or a flush rejects
 * (`PERSISTENCE_FAILED`), the loop never writes the refused event again,
 * closes the open step and turn as far as the log still accepts, reports
 * `agent/error` once, goes idle, and refuses every later admission and
 * `runMaintenance` with the same code until it is disposed. The drain never
 * spins.
 */

const noChunks = (lines: string[]) => lines.filter((line) => !line.startsWith('assistant/chunk'))

interface ErrorReport {
  turn: number
  step: number | undefined
  code: unknown
  cause: unknown
}

/** Every `agent/error`, reduced to what the rule promises. */
function errorReports(root: Awaited<ReturnType<typeof spine>>['root']): ErrorReport[] {
  const reports: ErrorReport[] = []
  root.on('agent/error', (_agent, turn, step, error) => {
    const e = error as AgentError
    reports.push({ turn, step, code: e.code, cause: e.cause })
  })
  return reports
}

/** What each admission path and `runMaintenance` throw now (`'ok'` when it was accepted). */
async function admissionCodes(a: Agent): Promise<Record<string, unknown>> {
  const codes: Record<string, unknown> = {}
  const attempt = (name: string, admit: () => unknown) => {
    try {
      admit()
      codes[name] = 'ok'
    } catch (error) {
      codes[name] = (error as AgentError).code
    }
  }
  attempt('followup', () => a.followup('later'))
  attempt('queue', () => a.queue('later'))
  attempt('steer', () => a.steer('later'))
  attempt('inject', () => a.inject('later'))
  attempt('send', () =>
    a.send({ content: [{ type: 'text', text: 'later' }], source: { kind: 'user' }, contexts: [], placement: 'separate', metadata: {}, target: 'next-turn', wakeup: true }),
  )
  codes.runMaintenance = await a.runMaintenance(async () => 'ok').catch((error: AgentError) => error.code)
  return codes
}

const refusedEverywhere = (code: string) => ({ followup: code, queue: code, steer: code, inject: code, send: code, runMaintenance: code })

/** The step's assistant message, refused by the log (the loop checks what listeners return, so the test refuses it). */
const refuseAnchor = (type: string) => type === 'assistant/message'

describe('the refused-write rule: an append the log refuses (APPEND_REFUSED)', () => {
  it('an assistant message the log refuses is never written again; the step and turn close error APPEND_REFUSED; agent/error once; idle', async () => {
    const { agent, root, model } = await spine({ model: { script: [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], answer: 'never' }] }, tools: [echo] })
    const reports = errorReports(root)
    const statuses: string[] = []
    root.on('agent/status', (_agent, status) => void statuses.push(status))
    const a = await agent()
    const log = refusingLog(a, refuseAnchor)
    a.followup('go')
    await a.whenIdle()
    expect(noChunks(trace(a.session))).toEqual([
      'inbox/enqueue next-turn "go"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "go"',
      'request/header initial scripted/test-model',
      'step/end 1.1',
      'turn/end 1 error APPEND_REFUSED',
    ])
    // Tried once, refused once (the old interrupted-step close wrote it again, and again).
    expect(log.attempts.filter((attempt) => attempt.type === 'assistant/message')).toHaveLength(1)
    expect(reports).toEqual([{ turn: 1, step: 1, code: 'APPEND_REFUSED', cause: expect.any(SessionError) }])
    expect((reports[0]!.cause as SessionError).code).toBe('INVARIANT')
    const end = a.session.events.at(-1)!
    expect(end.type === 'turn/end' && end.data.reason).toEqual({
      kind: 'error',
      failure: { code: 'APPEND_REFUSED', message: expect.stringContaining('refused assistant/message') },
    })
    expect(statuses).toEqual(['running', 'idle'])
    expect(a.status).toBe('idle')
    expect(model.calls).toBe(1)
    expect(log.runaway).toBe(false)
  })

  it('a refused assistant/chunk (the chunk path writes to the session directly) is tried once; the step and turn close error APPEND_REFUSED; agent/error once; idle', async () => {
    const { agent, root, model } = await spine({ model: { script: ['one two three'] } })
    const reports = errorReports(root)
    const a = await agent()
    const log = refusingLog(a, (type, _data, attempt) => type === 'assistant/chunk' && log.attempts.some((seen, i) => i < attempt && seen.type === 'assistant/chunk'))
    a.followup('go')
    await a.whenIdle()
    // The first chunk is logged, the second refused, no chunk is tried after it.
    expect(log.attempts.filter((attempt) => attempt.type === 'assistant/chunk').map((attempt) => attempt.refused)).toEqual([false, true])
    expect(trace(a.session).filter((line) => line.startsWith('assistant/chunk'))).toHaveLength(1)
    expect(reports).toEqual([{ turn: 1, step: 1, code: 'APPEND_REFUSED', cause: expect.any(SessionError) }])
    const end = a.session.events.at(-1)!
    expect(end.type === 'turn/end' && end.data.reason).toEqual({
      kind: 'error',
      failure: { code: 'APPEND_REFUSED', message: expect.stringContaining('refused assistant/chunk') },
    })
    expect(a.status).toBe('idle')
    expect(model.calls).toBe(1)
    expect(log.runaway).toBe(false)
  })

  it('steering pending when the log refuses stays pending in the log, and the drain does not spin (the interactive freeze of issue 15.1)', async () => {
    const { agent, root, model } = await spine({ model: { script: [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], answer: 'never' }] }, tools: [echo] })
    const a = await agent()
    root.on('agent/step-result', async (_agent, _turn, _step, _message, _signal, next) => {
      // The next line the person types arrives while the step is open: it is steering.
      a.steer('the next line')
      return next()
    })
    const log = refusingLog(a, refuseAnchor)
    a.followup('go')
    await a.whenIdle()
    expect(log.runaway).toBe(false)
    expect(log.attempts.filter((attempt) => attempt.type === 'turn/start')).toHaveLength(1)
    expect(noChunks(trace(a.session)).slice(-4)).toEqual([
      'request/header initial scripted/test-model',
      'inbox/enqueue next-step "the next line"',
      'step/end 1.1',
      'turn/end 1 error APPEND_REFUSED',
    ])
    // Not requeued, not discarded: pending in memory and in the log, for a resume.
    expect(a.inbox.nextStep.map((item) => item.content)).toEqual([[{ type: 'text', text: 'the next line' }]])
    expect(model.calls).toBe(1)
  })

  it('a refused turn/start opens no turn, reports agent/error (last turn, no step), and the drain stops after one try instead of spinning', async () => {
    const { agent, root, model } = await spine({ model: { script: ['never'] } })
    const reports = errorReports(root)
    const a = await agent()
    const log = refusingLog(a, (type) => type === 'turn/start')
    // Steering on an idle agent opens a steering turn; before the rule, a throwing turn/start left
    // the steering pending and the drain retried it forever on microtasks.
    a.steer('wake up')
    await a.whenIdle()
    expect(log.runaway).toBe(false)
    expect(log.attempts.map((attempt) => attempt.type)).toEqual(['inbox/enqueue', 'turn/start'])
    expect(trace(a.session)).toEqual(['inbox/enqueue next-step "wake up"'])
    expect(reports).toEqual([{ turn: 0, step: undefined, code: 'APPEND_REFUSED', cause: expect.any(SessionError) }])
    expect(a.inbox.nextStep).toHaveLength(1)
    expect(a.status).toBe('idle')
    expect(model.calls).toBe(0)
  })

  it('a refused claim (inbox/dequeue) leaves the prompt pending in memory and in the log', async () => {
    const { agent, root, model } = await spine({ model: { script: ['never'] } })
    const reports = errorReports(root)
    const a = await agent()
    const log = refusingLog(a, (type) => type === 'inbox/dequeue')
    const id = a.followup('go')
    await a.whenIdle()
    expect(log.runaway).toBe(false)
    expect(trace(a.session)).toEqual(['inbox/enqueue next-turn "go"'])
    expect(a.inbox.nextTurn.map((item) => item.id)).toEqual([id])
    expect(reports.map((report) => report.code)).toEqual(['APPEND_REFUSED'])
    expect(model.calls).toBe(0)
  })

  it('after the failure every admission and runMaintenance throws the failure code, and nothing more is written', async () => {
    const { agent, root } = await spine({ model: { script: [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], answer: 'never' }] }, tools: [echo] })
    const a = await agent()
    refusingLog(a, refuseAnchor)
    a.followup('go')
    await a.whenIdle()
    const length = a.session.events.length
    expect(await admissionCodes(a)).toEqual(refusedEverywhere('APPEND_REFUSED'))
    let thrown: unknown
    try {
      a.followup('again')
    } catch (error) {
      thrown = error
    }
    // The message names the original failure; the cause is the failure itself.
    expect(thrown).toMatchObject({ code: 'APPEND_REFUSED', message: expect.stringContaining('refused assistant/message') })
    expect((thrown as AgentError).cause).toMatchObject({ code: 'APPEND_REFUSED' })
    await a.whenIdle()
    expect(a.session.events.length).toBe(length)
  })

  it('dispose after the failure settles and discards nothing: what was pending is still pending after a resume', async () => {
    const backend = new MemorySessionPersistence()
    const first = await spine({ model: { script: [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], answer: 'never' }] }, tools: [echo] })
    await first.root.plugin(memoryPersistence, { backend })
    const a = await first.agent()
    refusingLog(a, refuseAnchor)
    a.followup('go')
    const parked = a.queue('parked for later')
    await a.whenIdle()
    await first.handles[0]!.dispose()
    expect(trace(a.session).filter((line) => line.startsWith('inbox/'))).toEqual([
      'inbox/enqueue next-turn "go"',
      'inbox/enqueue next-turn "parked for later"',
      'inbox/dequeue',
    ])
    const second = await spine({ model: { script: ['resumed answer'] } })
    await second.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const resumed = await second.root.agents.resume({ resumeSessionId: SessionId('a'), agentOptions: { provider: 'scripted', model: 'test-model' } })
    expect(resumed.agent.inbox.nextTurn.map((item) => item.id)).toEqual([parked])
    await resumed.dispose()
  })

  it('a refused tool/result breaks the batch: no later entry is written, running tools finish before the turn closes, and the turn stays open in the log', async () => {
    const gate = deferred<string>()
    let slowDone = false
    const slow = defineTool({
      name: 'slow',
      description: 'waits for the test',
      parameters: z.object({}),
      isConcurrencySafe: () => true,
      execute: async () => {
        const text = await gate.promise
        slowDone = true
        return text
      },
    })
    const { agent, root } = await spine({
      model: { script: [{ toolCalls: [{ name: 'echo', arguments: { text: 'first' } }, { name: 'slow', arguments: {} }], answer: 'never' }] },
      tools: [echo, slow],
    })
    const reports = errorReports(root)
    const a = await agent()
    const log = refusingLog(a, (type) => type === 'tool/result')
    a.followup('go')
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    let idle = false
    const waiting = a.whenIdle().then(() => (idle = true))
    await new Promise((resolve) => setImmediate(resolve))
    expect(idle).toBe(false)
    gate.resolve('slow result')
    await waiting
    expect(slowDone).toBe(true)
    expect(log.attempts.filter((attempt) => attempt.type === 'tool/result')).toHaveLength(1)
    expect(noChunks(trace(a.session)).slice(-3)).toEqual(['assistant/message "[tool-call][tool-call]" tool-calls', 'tool/call echo', 'tool/call slow'])
    expect(a.session.position.openTurn?.turn).toBe(1)
    expect(reports.map((report) => [report.turn, report.step, report.code])).toEqual([[1, 1, 'APPEND_REFUSED']])
    expect(log.runaway).toBe(false)
  })

  it('an inject() between steps that the log refuses throws APPEND_REFUSED to its caller and ends the open turn error', async () => {
    const { agent, root, model } = await spine({ model: { script: [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], answer: 'never' }] }, tools: [echo] })
    const reports = errorReports(root)
    const a = await agent()
    refusingLog(a, (type, data) => type === 'user/message' && JSON.stringify(data).includes('bad context'))
    let thrown: unknown
    root.on('agent/post-step', () => {
      try {
        a.inject('bad context')
      } catch (error) {
        thrown = error
      }
    })
    a.followup('go')
    await a.whenIdle()
    expect(thrown).toMatchObject({ code: 'APPEND_REFUSED' })
    expect(noChunks(trace(a.session)).slice(-4)).toEqual(['tool/call echo', 'tool/result ok "echo: x"', 'step/end 1.1', 'turn/end 1 error APPEND_REFUSED'])
    expect(reports.map((report) => [report.turn, report.step, report.code])).toEqual([[1, 1, 'APPEND_REFUSED']])
    expect(model.calls).toBe(1)
  })

  it('an idle inject() whose user/message the log refuses throws APPEND_REFUSED; its injection turn still closes, error', async () => {
    const { agent, root } = await spine({ model: { script: ['never'] } })
    const reports = errorReports(root)
    const a = await agent()
    refusingLog(a, (type) => type === 'user/message')
    expect(() => a.inject('a note')).toThrow(expect.objectContaining({ code: 'APPEND_REFUSED' }))
    await a.whenIdle()
    expect(trace(a.session)).toEqual(['turn/start 1 injection', 'turn/end 1 error APPEND_REFUSED'])
    expect(reports).toEqual([{ turn: 1, step: undefined, code: 'APPEND_REFUSED', cause: expect.any(SessionError) }])
  })

  it('an admission whose inbox/enqueue the log refuses throws APPEND_REFUSED and leaves nothing pending', async () => {
    const { agent, root } = await spine({ model: { script: ['never'] } })
    const reports = errorReports(root)
    const a = await agent()
    refusingLog(a, (type) => type === 'inbox/enqueue')
    expect(() => a.followup('go')).toThrow(expect.objectContaining({ code: 'APPEND_REFUSED' }))
    await a.whenIdle()
    expect(a.inbox).toEqual({ nextTurn: [], nextStep: [] })
    expect(trace(a.session)).toEqual([])
    expect(reports).toEqual([{ turn: 0, step: undefined, code: 'APPEND_REFUSED', cause: expect.any(SessionError) }])
  })

  it('a cancel whose inbox/discard the log refuses still ends the turn (error APPEND_REFUSED) and does not throw', async () => {
    const { agent, model } = await spine({ model: { script: ['never'] } })
    const a = await agent()
    const call = model.control()
    refusingLog(a, (type) => type === 'inbox/discard')
    a.followup('go')
    a.queue('pending')
    await call.started
    expect(() => a.cancel({ kind: 'user' })).not.toThrow()
    await a.whenIdle()
    expect(noChunks(trace(a.session)).at(-1)).toBe('turn/end 1 error APPEND_REFUSED')
    expect(a.inbox.nextTurn).toHaveLength(1)
  })
})
