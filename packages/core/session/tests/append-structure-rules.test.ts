import { describe, expect, it } from 'vitest'
import { CallId, MessageId } from '@deepseek-ai/dsh-llm'
import { SessionId, type Session } from '@deepseek-ai/dsh-session'
import { answer, assistant, expectRefused, openTurn, setup, toolCall, toolResult, typesOf, user } from './helpers'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    'test/note': { text: string }
  }
}

async function fresh(): Promise<Session> {
  const root = await setup()
  root.sessions.registerType('test/note')
  return root.sessions.prepare(SessionId('s'))
}

/** A session with turn 1 open and step 1 of it open. */
async function inStep(): Promise<Session> {
  const session = await fresh()
  openTurn(session, 1)
  session.append('step/start', { turn: 1, step: 1 })
  return session
}

/** A session whose open step's assistant message made calls `a`, `b`, `c` (model order). */
async function withCalls(): Promise<Session> {
  const session = await inStep()
  answer(session, 1, 1, [toolCall('a'), toolCall('b', 'write'), toolCall('c')])
  return session
}

const chunk = (turn: number, step: number) => ({ turn, step, chunk: { type: 'text-delta' as const, index: 0, text: 'x' } })

describe('R-SES-4 structural invariants (each refused append leaves the log unchanged)', () => {
  it('seq is dense from 0 and the first event is session/meta', async () => {
    const root = await setup()
    const session = root.sessions.prepare(SessionId('s'))
    expect(session.events.map((event) => event.seq)).toEqual([0])
    expect(session.events[0]!.type).toBe('session/meta')
    openTurn(session, 1)
    expect(session.events.map((event) => event.seq)).toEqual([0, 1, 2])
    const meta = { ...session.events[0]! }
    expect(() => root.sessions.prepare(SessionId('t'), { events: [{ ...session.events[1]!, seq: 0 }] })).toThrow(
      expect.objectContaining({ code: 'INVARIANT', message: expect.stringMatching(/first event of a session must be session\/meta/) }),
    )
    expect(() => root.sessions.prepare(SessionId('t'), { events: [meta, { ...session.events[1]!, seq: 2 }] })).toThrow(
      expect.objectContaining({ code: 'INVARIANT', message: expect.stringMatching(/dense from 0: event 1 has seq 2/) }),
    )
  })

  it('turns are numbered by one across the session', async () => {
    const session = await fresh()
    expectRefused(session, 'turn/start', { turn: 2, trigger: { kind: 'prompt' } }, 'INVARIANT', /expected turn 1, got 2/)
    session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    expectRefused(session, 'turn/start', { turn: 1, trigger: { kind: 'prompt' } }, 'INVARIANT', /expected turn 2, got 1/)
    session.append('turn/start', { turn: 2, trigger: { kind: 'steering' } })
  })

  it('turns nest properly: no turn/start inside a turn, turn/end only for the open turn', async () => {
    const session = await fresh()
    expectRefused(session, 'turn/end', { turn: 1, reason: { kind: 'completed' } }, 'INVARIANT', /no turn is open/)
    session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    expectRefused(session, 'turn/start', { turn: 2, trigger: { kind: 'prompt' } }, 'INVARIANT', /turn 1 is still open/)
    expectRefused(session, 'turn/end', { turn: 2, reason: { kind: 'completed' } }, 'INVARIANT', /turn 1 is open, not turn 2/)
  })

  it('steps are numbered by one within a turn and restart in the next turn', async () => {
    const session = await fresh()
    openTurn(session, 1)
    expectRefused(session, 'step/start', { turn: 1, step: 2 }, 'INVARIANT', /expected step 1, got 2/)
    session.append('step/start', { turn: 1, step: 1 })
    session.append('step/end', { turn: 1, step: 1 })
    expectRefused(session, 'step/start', { turn: 1, step: 1 }, 'INVARIANT', /expected step 2, got 1/)
    session.append('step/start', { turn: 1, step: 2 })
    session.append('step/end', { turn: 1, step: 2 })
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    openTurn(session, 2)
    session.append('step/start', { turn: 2, step: 1 })
  })

  it('steps nest inside their turn: no step outside a turn, no step inside a step, step/start names the open turn', async () => {
    const session = await fresh()
    expectRefused(session, 'step/start', { turn: 1, step: 1 }, 'INVARIANT', /inside a turn/)
    openTurn(session, 1)
    expectRefused(session, 'step/start', { turn: 2, step: 1 }, 'INVARIANT', /turn 1 is open, not turn 2/)
    session.append('step/start', { turn: 1, step: 1 })
    expectRefused(session, 'step/start', { turn: 1, step: 2 }, 'INVARIANT', /step 1 is still open/)
  })

  it('step/end closes the open step only', async () => {
    const session = await fresh()
    openTurn(session, 1)
    expectRefused(session, 'step/end', { turn: 1, step: 1 }, 'INVARIANT', /no step is open/)
    session.append('step/start', { turn: 1, step: 1 })
    expectRefused(session, 'step/end', { turn: 1, step: 2 }, 'INVARIANT', /step 1 of turn 1 is open, but the event names step 2 of turn 1/)
  })

  it('step/end precedes turn/end', async () => {
    const session = await inStep()
    expectRefused(session, 'turn/end', { turn: 1, reason: { kind: 'completed' } }, 'INVARIANT', /step 1 of turn 1 is still open/)
    session.append('step/end', { turn: 1, step: 1 })
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
  })

  it('assistant/*, tool/* and request/header sit inside a step', async () => {
    const session = await fresh()
    openTurn(session, 1)
    const message = assistant('hi')
    expectRefused(session, 'assistant/chunk', chunk(1, 1), 'INVARIANT', /assistant\/chunk must be inside a step/)
    expectRefused(session, 'assistant/message', { turn: 1, step: 1, message, chunkSeqs: [], finishReason: { kind: 'stop' } }, 'INVARIANT', /inside a step/)
    expectRefused(session, 'tool/call', { turn: 1, step: 1, callId: CallId('a'), name: 'read', arguments: '{}' }, 'INVARIANT', /inside a step/)
    expectRefused(session, 'tool/result', { turn: 1, step: 1, message: toolResult('a') }, 'INVARIANT', /inside a step/)
    expectRefused(session, 'request/header', { provider: 'p', model: 'm', system: '', tools: [], reason: 'initial' }, 'INVARIANT', /request\/header must be inside a step/)
  })

  it('events that name a step must name the open one', async () => {
    const session = await inStep()
    expectRefused(session, 'assistant/chunk', chunk(1, 2), 'INVARIANT', /step 1 of turn 1 is open, but the event names step 2 of turn 1/)
    expectRefused(session, 'assistant/chunk', chunk(2, 1), 'INVARIANT', /names step 1 of turn 2/)
    session.append('assistant/chunk', chunk(1, 1))
    session.append('request/header', { provider: 'p', model: 'm', system: '', tools: [], reason: 'initial' })
  })

  it('user/message and steering/message sit inside a turn, inside or between its steps', async () => {
    const session = await fresh()
    expectRefused(session, 'user/message', { message: user('hi') }, 'INVARIANT', /inside a turn/)
    expectRefused(session, 'steering/message', { message: user('hi') }, 'INVARIANT', /inside a turn/)
    session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    session.append('user/message', { message: user('between steps') })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('steering/message', { message: user('inside a step') })
    session.append('step/end', { turn: 1, step: 1 })
    session.append('steering/message', { message: user('after a step') })
    expect(typesOf(session).slice(1)).toEqual(['turn/start', 'user/message', 'step/start', 'steering/message', 'step/end', 'steering/message'])
  })

  it('an injection turn holds only user/messages and no step', async () => {
    const session = await fresh()
    session.append('turn/start', { turn: 1, trigger: { kind: 'injection' } })
    session.append('user/message', { message: user('context') })
    expectRefused(session, 'step/start', { turn: 1, step: 1 }, 'INVARIANT', /injection turn, which holds no step/)
    expectRefused(session, 'steering/message', { message: user('steer') }, 'INVARIANT', /injection turn, which holds only user\/messages/)
    session.append('inbox/dequeue', { id: MessageId('m1') })
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    session.append('turn/start', { turn: 2, trigger: { kind: 'prompt' } })
    session.append('step/start', { turn: 2, step: 1 })
  })

  it('a step has at most one assistant/message (a retry opens a new step)', async () => {
    const session = await inStep()
    answer(session, 1, 1, 'first')
    expectRefused(session, 'assistant/message', { turn: 1, step: 1, message: assistant('again', 'a2'), chunkSeqs: [], finishReason: { kind: 'stop' } }, 'INVARIANT', /already has its assistant\/message/)
  })

  it("chunkSeqs point at this step's assistant/chunk events in increasing order", async () => {
    const session = await fresh()
    openTurn(session, 1)
    session.append('step/start', { turn: 1, step: 1 })
    const c1 = session.append('assistant/chunk', chunk(1, 1)).seq
    session.append('request/header', { provider: 'p', model: 'm', system: '', tools: [], reason: 'initial' })
    const c2 = session.append('assistant/chunk', chunk(1, 1)).seq
    const base = { turn: 1, step: 1, message: assistant('xx'), finishReason: { kind: 'stop' as const } }
    expectRefused(session, 'assistant/message', { ...base, chunkSeqs: [c2, c1] }, 'INVARIANT', /chunkSeqs\[1\]/)
    expectRefused(session, 'assistant/message', { ...base, chunkSeqs: [c1, c1 + 1] }, 'INVARIANT', /chunkSeqs\[1\] = 5 is not an assistant\/chunk/)
    expectRefused(session, 'assistant/message', { ...base, chunkSeqs: [2] }, 'INVARIANT', /chunkSeqs\[0\] = 2/)
    expectRefused(session, 'assistant/message', { ...base, chunkSeqs: [c1, 99] }, 'INVARIANT', /chunkSeqs\[1\] = 99/)
    session.append('assistant/message', { ...base, chunkSeqs: [c1, c2] })
  })

  it('a tool/call follows the assistant/message and names its calls in model order, each once', async () => {
    const early = await inStep()
    expectRefused(early, 'tool/call', { turn: 1, step: 1, callId: CallId('a'), name: 'read', arguments: '{}' }, 'INVARIANT', /must follow its step's assistant\/message/)

    const session = await withCalls()
    const call = (id: string, name = 'read') => ({ turn: 1, step: 1, callId: CallId(id), name, arguments: '{}' })
    expectRefused(session, 'tool/call', call('b', 'write'), 'INVARIANT', /model order: expected call "a" \(read\) first/)
    expectRefused(session, 'tool/call', call('zz'), 'INVARIANT', /"zz" is not a tool call of this step/)
    expectRefused(session, 'tool/call', call('a', 'write'), 'INVARIANT', /named "read" in the assistant message, not "write"/)
    session.append('tool/call', call('a'))
    expectRefused(session, 'tool/call', call('a'), 'INVARIANT', /"a" already has its tool\/call/)
    session.append('tool/call', call('b', 'write'))
  })

  it('a tool/result answers a called tool in model order, once, after its tool/call', async () => {
    const session = await withCalls()
    const result = (id: string) => ({ turn: 1, step: 1, message: toolResult(id) })
    expectRefused(session, 'tool/result', result('a'), 'INVARIANT', /result for call "a" comes before its tool\/call/)
    session.append('tool/call', { turn: 1, step: 1, callId: CallId('a'), name: 'read', arguments: '{}' })
    session.append('tool/call', { turn: 1, step: 1, callId: CallId('b'), name: 'write', arguments: '{}' })
    expectRefused(session, 'tool/result', result('b'), 'INVARIANT', /model order: expected the result of call "a" first/)
    expectRefused(session, 'tool/result', result('zz'), 'INVARIANT', /"zz" is not a tool call of this step/)
    session.append('tool/result', result('a'))
    expectRefused(session, 'tool/result', result('a'), 'INVARIANT', /"a" already has its tool\/result/)
    session.append('tool/result', result('b'))
  })

  it('every tool call gets one tool/call and one tool/result before step/end', async () => {
    const session = await withCalls()
    const end = { turn: 1, step: 1 }
    expectRefused(session, 'step/end', end, 'INVARIANT', /call "a" \(read\) has no tool\/call yet/)
    for (const [id, name] of [['a', 'read'], ['b', 'write'], ['c', 'read']] as const) {
      session.append('tool/call', { turn: 1, step: 1, callId: CallId(id), name, arguments: '{}' })
    }
    expectRefused(session, 'step/end', end, 'INVARIANT', /call "a" \(read\) has no tool\/result yet/)
    session.append('tool/result', { turn: 1, step: 1, message: toolResult('a') })
    session.append('tool/result', { turn: 1, step: 1, message: toolResult('b') })
    expectRefused(session, 'step/end', end, 'INVARIANT', /call "c" \(read\) has no tool\/result yet/)
    session.append('tool/result', { turn: 1, step: 1, message: toolResult('c') })
    session.append('step/end', end)
  })

  it('calls and results may interleave as long as each follows model order', async () => {
    const session = await withCalls()
    const call = (id: string, name: string) => session.append('tool/call', { turn: 1, step: 1, callId: CallId(id), name, arguments: '{}' })
    const result = (id: string) => session.append('tool/result', { turn: 1, step: 1, message: toolResult(id) })
    call('a', 'read')
    result('a')
    call('b', 'write')
    call('c', 'read')
    result('b')
    result('c')
    session.append('step/end', { turn: 1, step: 1 })
    expect(typesOf(session).slice(-7)).toEqual(['tool/call', 'tool/result', 'tool/call', 'tool/call', 'tool/result', 'tool/result', 'step/end'])
  })

  it('an assistant message that names one call twice is refused', async () => {
    const session = await inStep()
    expectRefused(session, 'assistant/message', { turn: 1, step: 1, message: assistant([toolCall('a'), toolCall('a')]), chunkSeqs: [], finishReason: { kind: 'tool-calls' } }, 'INVARIANT', /names tool call "a" twice/)
  })

  it('session/meta, inbox/*, todo/write and merged types may appear anywhere', async () => {
    const session = await fresh()
    const anywhere = () => {
      session.append('session/meta', { createdAt: 1, version: 1 })
      session.append('inbox/enqueue', { message: { id: MessageId('m'), content: [], source: { kind: 'user' }, contexts: [], placement: 'separate', metadata: {}, target: 'next-turn', wakeup: true } })
      session.append('inbox/dequeue', { id: MessageId('m') })
      session.append('inbox/discard', { ids: [MessageId('m')] })
      session.append('inbox/requeue', { id: MessageId('m') })
      session.append('todo/write', { todos: [{ id: '1', content: 'do it', status: 'pending' }] })
      session.append('test/note', { text: 'note' })
    }
    anywhere() // outside any turn
    openTurn(session, 1)
    anywhere() // inside a turn, between steps
    session.append('step/start', { turn: 1, step: 1 })
    anywhere() // inside a step
    expect(session.events).toHaveLength(1 + 7 + 2 + 7 + 1 + 7)
  })

  it('position tracks the last turn, the open turn, the open step and the last step', async () => {
    const session = await fresh()
    const positions = [session.position]
    session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    positions.push(session.position)
    session.append('step/start', { turn: 1, step: 1 })
    positions.push(session.position)
    session.append('step/end', { turn: 1, step: 1 })
    positions.push(session.position)
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    positions.push(session.position)
    expect(positions).toEqual([
      { lastTurn: 0, lastStep: 0 },
      { lastTurn: 1, openTurn: { turn: 1, trigger: { kind: 'prompt' } }, lastStep: 0 },
      { lastTurn: 1, openTurn: { turn: 1, trigger: { kind: 'prompt' } }, openStep: { turn: 1, step: 1 }, lastStep: 1 },
      { lastTurn: 1, openTurn: { turn: 1, trigger: { kind: 'prompt' } }, lastStep: 1 },
      { lastTurn: 1, lastStep: 0 },
    ])
    expect(positions.every(Object.isFrozen)).toBe(true)
  })

  it('position is the same object until a turn or step boundary moves it', async () => {
    const session = await inStep()
    const before = session.position
    session.append('inbox/requeue', { id: MessageId('m') })
    answer(session, 1, 1, 'done')
    const same = session.position
    session.append('step/end', { turn: 1, step: 1 })
    const after = session.position
    expect([same === before, after === before, session.position === after]).toEqual([true, false, true])
    expect([before, after]).toEqual([
      { lastTurn: 1, openTurn: { turn: 1, trigger: { kind: 'prompt' } }, openStep: { turn: 1, step: 1 }, lastStep: 1 },
      { lastTurn: 1, openTurn: { turn: 1, trigger: { kind: 'prompt' } }, lastStep: 1 },
    ])
  })
})
