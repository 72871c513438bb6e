import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Invariants, { InvariantError, type InvariantPolicy } from '@deepseek-ai/dsh-invariants'
import { subjectFilter } from '@deepseek-ai/dsh-scope'
import Sessions, { type AnySessionEvent, type Session, type SessionEventMap, type SessionEventType } from '@deepseek-ai/dsh-session'
import LogStructure, { LOG_STRUCTURE } from '@deepseek-ai/dsh-session/invariant'
import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import { answer, assistant, closedTurn, openTurn, toolCall, toolResult, user } from './helpers'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    'invariant-test/note': { text: string }
  }
}

async function setup(policy: InvariantPolicy = 'collect') {
  const root = new Context()
  await root.plugin(Sessions)
  await root.plugin(Invariants, { policy })
  await root.plugin(LogStructure)
  return root
}

function violation(session: string, seq: number, type: string, message: string) {
  return { invariant: LOG_STRUCTURE, message: `session ${JSON.stringify(session)}, seq ${seq} (${type}): ${message}`, details: { session, seq, type } }
}

/** A tool round in turn `turn`: step 1 calls two tools, step 2 answers. */
function toolRound(session: Session, turn: number): void {
  openTurn(session, turn)
  session.append('step/start', { turn, step: 1 })
  session.append('request/header', { provider: 'test', model: 'm', system: '', tools: [], reason: 'initial' })
  answer(session, turn, 1, [toolCall(`c${turn}-1`), toolCall(`c${turn}-2`, 'write')])
  session.append('tool/call', { turn, step: 1, callId: `c${turn}-1` as never, name: 'read', arguments: '{}' })
  session.append('tool/call', { turn, step: 1, callId: `c${turn}-2` as never, name: 'write', arguments: '{}' })
  session.append('tool/result', { turn, step: 1, message: toolResult(`c${turn}-1`) })
  session.append('tool/result', { turn, step: 1, message: toolResult(`c${turn}-2`) })
  session.append('steering/message', { message: user(`steer ${turn}`) })
  session.append('step/end', { turn, step: 1 })
  session.append('step/start', { turn, step: 2 })
  answer(session, turn, 2, 'done')
  session.append('step/end', { turn, step: 2 })
  session.append('turn/end', { turn, reason: { kind: 'completed' } })
}

/**
 * A session object the test controls entirely, announced like a real one: a
 * stand-in for a broken store. `publish` appends an event (deep-frozen unless
 * told otherwise) and emits `session/event` for it.
 */
function forged(root: Context, id: string) {
  const events: AnySessionEvent[] = []
  const session = { id, events } as unknown as Session
  const filter = subjectFilter(id)
  root.emit(filter, 'session/created', session)
  const make = <K extends SessionEventType>(type: K, data: SessionEventMap[K], seq = events.length) =>
    ({ type, seq, time: 0, data }) as unknown as AnySessionEvent
  return {
    session,
    publish<K extends SessionEventType>(type: K, data: SessionEventMap[K], options: { seq?: number; frozen?: boolean } = {}) {
      const event = make(type, data, options.seq)
      if (options.frozen !== false) deepFreeze(event)
      events.push(event)
      root.emit(filter, 'session/event', session, event)
      return event
    },
    appendSilently<K extends SessionEventType>(type: K, data: SessionEventMap[K]) {
      events.push(deepFreeze(make(type, data)))
    },
    republish(event: AnySessionEvent) {
      root.emit(filter, 'session/event', session, event)
    },
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}

const meta = { createdAt: 0, version: 1 }

/** Publishes a log's start and an open step 1.1 whose assistant/message makes `calls`; events 0 to 3. */
function toolStep(log: ReturnType<typeof forged>, calls: ContentBlock[]) {
  log.publish('session/meta', meta)
  log.publish('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
  log.publish('step/start', { turn: 1, step: 1 })
  log.publish('assistant/message', { turn: 1, step: 1, message: assistant(calls), chunkSeqs: [], finishReason: { kind: 'tool-calls' } })
  return log
}

describe('dsh-session/invariant on healthy logs', () => {
  it('finds nothing over tool rounds, steering, injection turns, merged types, a fork, a reload and disposal', async () => {
    const root = await setup()
    root.sessions.registerType('invariant-test/note')
    const session = root.sessions.create('a')
    session.append('inbox/enqueue', {
      message: { id: 'm1' as never, content: [], source: { kind: 'user' }, contexts: [], placement: 'separate', metadata: {}, target: 'next-turn', wakeup: true },
    })
    session.append('inbox/dequeue', { id: 'm1' as never })
    toolRound(session, 1)
    session.append('invariant-test/note', { text: 'anywhere' })
    session.append('turn/start', { turn: 2, trigger: { kind: 'injection' } })
    session.append('user/message', { message: user('injected') })
    session.append('turn/end', { turn: 2, reason: { kind: 'completed' } })
    closedTurn(session, 3)
    session.append('todo/write', { todos: [] })

    const child = root.sessions.fork(session, undefined, 'child')
    root.sessions.enter(child)
    toolRound(child, 4)

    const reloaded = root.sessions.prepare('reloaded', { events: JSON.parse(JSON.stringify(session.events)) })
    const detach = root.sessions.enter(reloaded)
    closedTurn(reloaded, 4)
    detach()

    expect(await root.invariants.check()).toEqual([])
    expect(root.invariants.violations).toEqual([])
  })

  it('reads the sessions that were live before it was mounted when it first sees them', async () => {
    const root = new Context()
    await root.plugin(Sessions)
    await root.plugin(Invariants, { policy: 'collect' })
    const early = root.sessions.create('early')
    toolRound(early, 1)
    await root.plugin(LogStructure)
    closedTurn(early, 2)
    const quiet = root.sessions.create('quiet')
    expect(await root.invariants.check()).toEqual([])
    expect(quiet.events).toHaveLength(1)
    expect(root.invariants.violations).toEqual([])
  })
})

describe('dsh-session/invariant finds each seeded fault', () => {
  it('a seq that is not the index, an unfrozen event, a log not starting with session/meta', async () => {
    const root = await setup()
    const log = forged(root, 'f')
    log.publish('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    log.publish('user/message', { message: user('hi') }, { seq: 7 })
    log.publish('user/message', { message: { ...user('hi'), content: [{ type: 'text', text: 'soft' }] } }, { frozen: false })
    expect(root.invariants.violations).toEqual([
      violation('f', 0, 'turn/start', 'the first event of a session must be session/meta'),
      violation('f', 1, 'user/message', 'its seq is 7, but it is event 1 of the log (seq must equal the index)'),
      violation('f', 2, 'user/message', 'event is not frozen'),
    ])
  })

  it('a nested value left unfrozen is named by its path', async () => {
    const root = await setup()
    const log = forged(root, 'f')
    log.publish('session/meta', meta)
    const event = { type: 'todo/write', seq: 1, time: 0, data: { todos: [{ id: 't', content: 'x', status: 'pending' }] } }
    Object.freeze(event)
    Object.freeze(event.data)
    Object.freeze(event.data.todos)
    ;(log.session.events as AnySessionEvent[]).push(event as AnySessionEvent)
    log.republish(event as AnySessionEvent)
    expect(root.invariants.violations).toEqual([violation('f', 1, 'todo/write', 'event.data.todos[0] is not frozen')])
  })

  it('turn and step numbering and nesting', async () => {
    const root = await setup()
    const log = forged(root, 'f')
    log.publish('session/meta', meta)
    log.publish('step/start', { turn: 1, step: 1 })
    log.publish('turn/start', { turn: 2, trigger: { kind: 'prompt' } })
    log.publish('step/start', { turn: 2, step: 2 })
    log.publish('turn/end', { turn: 2, reason: { kind: 'completed' } })
    log.publish('user/message', { message: user('outside') })
    log.publish('turn/start', { turn: 3, trigger: { kind: 'injection' } })
    log.publish('steering/message', { message: user('steer') })
    log.publish('step/start', { turn: 3, step: 1 })
    expect(root.invariants.violations).toEqual([
      violation('f', 1, 'step/start', 'no turn is open'),
      violation('f', 2, 'turn/start', 'turn 2 follows turn 0 (turns are numbered by one)'),
      violation('f', 3, 'step/start', 'step 2 follows step 0 (steps are numbered by one within a turn)'),
      violation('f', 4, 'turn/end', 'step 2.2 is still open (step/end must come first)'),
      violation('f', 5, 'user/message', 'it must be inside a turn, and no turn is open'),
      violation('f', 7, 'steering/message', 'turn 3 is an injection turn, which holds only user/messages'),
      violation('f', 8, 'step/start', 'turn 3 is an injection turn, which holds no step'),
    ])
  })

  it('step-bound events outside their step, and two answers in one step', async () => {
    const root = await setup()
    const log = forged(root, 'f')
    log.publish('session/meta', meta)
    log.publish('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    log.publish('request/header', { provider: 'p', model: 'm', system: '', tools: [], reason: 'initial' })
    log.publish('step/start', { turn: 1, step: 1 })
    log.publish('assistant/chunk', { turn: 1, step: 2, chunk: { type: 'text-delta', index: 0, text: 'x' } })
    log.publish('assistant/message', { turn: 1, step: 1, message: { ...user('x'), role: 'assistant' } as never, chunkSeqs: [], finishReason: { kind: 'stop' } })
    log.publish('assistant/message', { turn: 1, step: 1, message: { ...user('y'), role: 'assistant' } as never, chunkSeqs: [], finishReason: { kind: 'stop' } })
    expect(root.invariants.violations).toEqual([
      violation('f', 2, 'request/header', 'it must be inside a step, and no step is open'),
      violation('f', 4, 'assistant/chunk', 'it names step 1.2, but step 1.1 is open'),
      violation('f', 6, 'assistant/message', 'step 1.1 already has its assistant/message'),
    ])
  })

  it('tool calls and results: model order, a result before its call, a call left unanswered at step/end', async () => {
    const root = await setup()
    const log = toolStep(forged(root, 'f'), [toolCall('c1'), toolCall('c2', 'write'), toolCall('c3')])
    log.publish('tool/call', { turn: 1, step: 1, callId: 'c2' as never, name: 'write', arguments: '{}' })
    log.publish('tool/result', { turn: 1, step: 1, message: toolResult('c1') })
    log.publish('tool/result', { turn: 1, step: 1, message: toolResult('c2') })
    log.publish('step/end', { turn: 1, step: 1 })
    expect(root.invariants.violations).toEqual([
      violation('f', 4, 'tool/call', 'expected the tool/call of "c1" (read) next, in model order'),
      violation('f', 5, 'tool/result', 'the tool/result of "c1" comes before its tool/call'),
      violation('f', 7, 'step/end', 'tool call "c1" has no tool/call'),
    ])
  })

  it('a misnamed tool/call, a call answered twice, a result no call asked for', async () => {
    const root = await setup()
    const log = toolStep(forged(root, 'f'), [toolCall('c1')])
    log.publish('tool/call', { turn: 1, step: 1, callId: 'c1' as never, name: 'write', arguments: '{}' })
    log.publish('tool/result', { turn: 1, step: 1, message: toolResult('c1') })
    log.publish('tool/result', { turn: 1, step: 1, message: toolResult('c1') })
    log.publish('tool/result', { turn: 1, step: 1, message: toolResult('c9') })
    expect(root.invariants.violations).toEqual([
      violation('f', 4, 'tool/call', 'call "c1" is named "read" in the assistant/message, not "write"'),
      violation('f', 6, 'tool/result', 'call "c1" already has its tool/result'),
      violation('f', 7, 'tool/result', 'its result (for "c9") answers no tool call of this step\'s assistant/message'),
    ])
  })

  it('an assistant/message naming one tool call id twice (one tool/call and one tool/result then pass for both)', async () => {
    const root = await setup()
    const log = toolStep(forged(root, 'f'), [toolCall('c1'), toolCall('c1')])
    log.publish('tool/call', { turn: 1, step: 1, callId: 'c1' as never, name: 'read', arguments: '{}' })
    log.publish('tool/result', { turn: 1, step: 1, message: toolResult('c1') })
    log.publish('step/end', { turn: 1, step: 1 })
    expect(root.invariants.violations).toEqual([violation('f', 3, 'assistant/message', 'the assistant message names tool call "c1" twice')])
  })

  it('session/event after session/disposed (eager), on a real session', async () => {
    const root = await setup()
    const session = root.sessions.prepare('gone')
    const detach = root.sessions.enter(session)
    closedTurn(session, 1)
    detach()
    root.emit(subjectFilter('gone'), 'session/event', session, session.events[1]!)
    expect(root.invariants.violations).toEqual([violation('gone', 1, 'turn/start', 'published after session/disposed')])
  })

  it('an event published twice, and one that is not in the log', async () => {
    const root = await setup()
    const log = forged(root, 'f')
    const first = log.publish('session/meta', meta)
    log.republish(first)
    log.republish({ type: 'todo/write', seq: 9, time: 0, data: { todos: [] } } as AnySessionEvent)
    expect(root.invariants.violations).toEqual([
      violation('f', 0, 'session/meta', 'published again, or out of order'),
      violation('f', 9, 'todo/write', 'it is not an entry of the session log'),
    ])
  })

  it('events skipped by session/event: eagerly at the next one, or by check()', async () => {
    const root = await setup()
    const log = forged(root, 'f')
    log.publish('session/meta', meta)
    log.appendSilently('todo/write', { todos: [] })
    log.appendSilently('todo/write', { todos: [] })
    log.publish('todo/write', { todos: [] })
    expect(root.invariants.violations).toEqual([violation('f', 3, 'todo/write', 'events 1 to 2 were never published (session/event skipped them)')])
    log.appendSilently('turn/end', { turn: 1, reason: { kind: 'completed' } })
    expect(await root.invariants.check()).toEqual([
      violation('f', 4, 'check', 'events 4 to 4 were appended without session/event'),
      violation('f', 4, 'turn/end', 'no turn is open'),
    ])
    expect(await root.invariants.check()).toEqual([])
  })

  it('under throw, eager findings are held for check(), which rejects with them', async () => {
    const root = await setup('throw')
    const log = forged(root, 'f')
    expect(() => log.publish('turn/start', { turn: 1, trigger: { kind: 'prompt' } })).not.toThrow()
    expect(root.invariants.violations).toEqual([])
    const error = await root.invariants.check().then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(error).toBeInstanceOf(InvariantError)
    expect((error as InvariantError).violations).toEqual([violation('f', 0, 'turn/start', 'the first event of a session must be session/meta')])
  })
})
