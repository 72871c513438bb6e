import { describe, expect, it } from 'vitest'
import { CallId, MessageId } from '@deepseek-ai/dsh-llm'
import { INTERRUPTED_RESULT_TEXT, repairSession, type Session, type SessionError } from '@deepseek-ai/dsh-session'
import { answer, closedTurn, openTurn, setup, toolCall, toolResult } from './helpers'

const now = 1_700_000_000_000

async function session(): Promise<Session> {
  const root = await setup()
  return root.sessions.prepare('s')
}

/** Checks that log + repairs is a valid log for a fresh store, and that repairing it again finds nothing. */
async function expectValidAfterRepair(log: Session) {
  const plan = repairSession(log.events, { now })
  const repaired = [...log.events, ...plan.events]
  const root = await setup()
  const loaded = root.sessions.prepare('loaded', { events: JSON.parse(JSON.stringify(repaired)) })
  expect(loaded.position.openTurn).toBeUndefined()
  expect(repairSession(repaired).events).toEqual([])
  return loaded
}

describe('repairSession (R-PER-3)', () => {
  it('repairs nothing in a log whose turns are closed', async () => {
    const log = await session()
    expect(repairSession(log.events, { now })).toEqual({ events: [], repairs: [] })
    closedTurn(log, 1)
    expect(repairSession(log.events, { now })).toEqual({ events: [], repairs: [] })
  })

  it('closes an open turn that has no open step with turn/end{interrupted}', async () => {
    const log = await session()
    closedTurn(log, 1)
    openTurn(log, 2)
    log.append('step/start', { turn: 2, step: 1 })
    answer(log, 2, 1, 'done')
    log.append('step/end', { turn: 2, step: 1 })
    expect(repairSession(log.events, { now })).toEqual({
      events: [{ type: 'turn/end', seq: 12, time: now, data: { turn: 2, reason: { kind: 'interrupted' } } }],
      repairs: [{ seq: 12, type: 'turn/end', detail: 'closed turn 2 as interrupted' }],
    })
    await expectValidAfterRepair(log)
  })

  it('closes an open injection turn', async () => {
    const log = await session()
    log.append('turn/start', { turn: 1, trigger: { kind: 'injection' } })
    expect(repairSession(log.events, { now }).events.map((event) => event.type)).toEqual(['turn/end'])
    await expectValidAfterRepair(log)
  })

  it('closes an open step without a model answer with step/end, then turn/end', async () => {
    const log = await session()
    openTurn(log, 1)
    log.append('step/start', { turn: 1, step: 1 })
    log.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'half an ans' } })
    expect(repairSession(log.events, { now })).toEqual({
      events: [
        { type: 'step/end', seq: 5, time: now, data: { turn: 1, step: 1 } },
        { type: 'turn/end', seq: 6, time: now, data: { turn: 1, reason: { kind: 'interrupted' } } },
      ],
      repairs: [
        { seq: 5, type: 'step/end', detail: 'closed step 1 of turn 1, which the crash left open' },
        { seq: 6, type: 'turn/end', detail: 'closed turn 1 as interrupted' },
      ],
    })
    await expectValidAfterRepair(log)
  })

  it('gives each call of the open step its missing tool/call and an INTERRUPTED result, in model order, then closes step and turn', async () => {
    const log = await session()
    openTurn(log, 1)
    log.append('step/start', { turn: 1, step: 1 })
    log.append('step/end', { turn: 1, step: 1 })
    log.append('step/start', { turn: 1, step: 2 }) // seq 5
    answer(log, 1, 2, [toolCall('a'), toolCall('b', 'write', '{"x":1}'), toolCall('c', 'grep', '{"q":"y"}')])
    log.append('tool/call', { turn: 1, step: 2, callId: CallId('a'), name: 'read', arguments: '{}' })
    log.append('tool/call', { turn: 1, step: 2, callId: CallId('b'), name: 'write', arguments: '{"x":1}' })
    log.append('tool/result', { turn: 1, step: 2, message: toolResult('a') }) // seq 9
    const interrupted = (callId: string) => ({
      id: MessageId(`interrupted-${callId}`),
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: INTERRUPTED_RESULT_TEXT }], isError: true }],
      source: { kind: 'tool', callId },
    })
    const error = { code: 'INTERRUPTED', message: 'the session stopped before this tool call finished' }
    expect(repairSession(log.events, { now })).toEqual({
      events: [
        { type: 'tool/result', seq: 10, time: now, data: { turn: 1, step: 2, message: interrupted('b'), error } },
        { type: 'tool/call', seq: 11, time: now, data: { turn: 1, step: 2, callId: 'c', name: 'grep', arguments: '{"q":"y"}' } },
        { type: 'tool/result', seq: 12, time: now, data: { turn: 1, step: 2, message: interrupted('c'), error } },
        { type: 'step/end', seq: 13, time: now, data: { turn: 1, step: 2 } },
        { type: 'turn/end', seq: 14, time: now, data: { turn: 1, reason: { kind: 'interrupted' } } },
      ],
      repairs: [
        { seq: 10, type: 'tool/result', detail: 'added an INTERRUPTED error result for call "b" (write) in step 2 of turn 1' },
        { seq: 11, type: 'tool/call', detail: 'added the missing tool/call of call "c" (grep) in step 2 of turn 1' },
        { seq: 12, type: 'tool/result', detail: 'added an INTERRUPTED error result for call "c" (grep) in step 2 of turn 1' },
        { seq: 13, type: 'step/end', detail: 'closed step 2 of turn 1, which the crash left open' },
        { seq: 14, type: 'turn/end', detail: 'closed turn 1 as interrupted' },
      ],
    })
    const loaded = await expectValidAfterRepair(log)
    // The next request is valid for every provider: every call has its result.
    expect(loaded.deriveMessages().map((message) => message.content[0]!.type)).toEqual(['text', 'tool-call', 'tool-result', 'tool-result', 'tool-result'])
  })

  it('refuses a damaged event of the open turn it would read (INVALID_EVENT naming seq, type and path) instead of planning repairs from it', async () => {
    const log = await session()
    closedTurn(log, 1)
    openTurn(log, 2)
    log.append('step/start', { turn: 2, step: 1 })
    answer(log, 2, 1, [toolCall('c1')])
    log.append('tool/call', { turn: 2, step: 1, callId: CallId('c1'), name: 'read', arguments: '{}' })
    const stored = JSON.parse(JSON.stringify(log.events)) as Array<{ type: string; seq: number; data: Record<string, unknown> }>
    const damaged = (seq: number, data: Record<string, unknown>) => stored.map((event) => (event.seq === seq ? { ...event, data } : event)) as never
    const refusal = (events: never) => {
      try {
        return { planned: repairSession(events, { now }) }
      } catch (error) {
        const { name, code, seq, type, path, message } = error as SessionError
        return { name, code, seq, type, path, message }
      }
    }
    const call = stored.length - 1
    const [turnStart, stepStart, message] = [call - 4, call - 2, call - 1]
    expect(stored.map((event) => event.type).slice(turnStart)).toEqual(['turn/start', 'user/message', 'step/start', 'assistant/message', 'tool/call'])
    expect(refusal(damaged(message, {}))).toEqual({
      name: 'SessionError',
      code: 'INVALID_EVENT',
      seq: message,
      type: 'assistant/message',
      path: 'data.turn',
      message: `crash repair cannot read event ${message} (assistant/message), so the open turn cannot be closed: data.turn must be an integer ≥ 1`,
    })
    expect(refusal(damaged(turnStart, { turn: 'two', trigger: { kind: 'prompt' } }))).toMatchObject({ code: 'INVALID_EVENT', seq: turnStart, type: 'turn/start', path: 'data.turn' })
    expect(refusal(damaged(stepStart, { turn: 2 }))).toMatchObject({ code: 'INVALID_EVENT', seq: stepStart, type: 'step/start', path: 'data.step' })
    expect(refusal(damaged(call, { turn: 2, step: 1, name: 'read', arguments: '{}' }))).toMatchObject({ code: 'INVALID_EVENT', seq: call, type: 'tool/call', path: 'data.callId' })
    const result = stored.length
    const resultData = { turn: 2, step: 1, message: { role: 'user' } }
    expect(refusal([...stored, { type: 'tool/result', seq: result, time: now, data: resultData }] as never)).toMatchObject({ code: 'INVALID_EVENT', seq: result, type: 'tool/result' })
  })

  it('does not mutate the log it is given', async () => {
    const log = await session()
    openTurn(log, 1)
    const before = [...log.events]
    repairSession(log.events, { now })
    expect(log.events).toEqual(before)
  })
})
