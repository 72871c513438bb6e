import { describe, expect, it } from 'vitest'
import { Context } from 'cordis'
import { CallId, createUserMessage, historyOf, MessageId, type Message } from '@deepseek-ai/dsh-llm'
import { SessionId, type Session, type SessionProjector } from '@deepseek-ai/dsh-session'
import { answer, closedTurn, expectRefused, openTurn, setup, toolCall, toolResult, user } from './helpers'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    /** A compaction summary replacing the history derived from seqs [from, to). */
    'test/compaction': { from: number; to: number; summary: string }
    'test/reminder': { text: string }
  }
}

const summary = (text: string, id = `summary-${text}`) => createUserMessage(text, { id: MessageId(id), source: { kind: 'plugin', plugin: 'compaction' } })

const compaction: SessionProjector<'test/compaction'> = (event) => ({
  messages: [summary(event.data.summary)],
  shadow: { from: event.data.from, to: event.data.to },
})

const texts = (messages: readonly Message[]) =>
  messages.map((message) => message.content.map((block) => (block.type === 'text' ? block.text : block.type)).join('+'))

describe('deriveMessages (R-SES-2, R-SES-3, R-PERF-1)', () => {
  it('projects user/message, steering/message, non-empty assistant/message and tool/result in log order; the rest is log-only', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1, 'question')
    session.append('step/start', { turn: 1, step: 1 })
    session.append('request/header', { provider: 'p', model: 'm', system: 'sys', tools: [], reason: 'initial' })
    const chunk = session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } })
    const call = answer(session, 1, 1, [{ type: 'text', text: 'let me look' }, toolCall('c1')])
    session.append('tool/call', { turn: 1, step: 1, callId: CallId('c1'), name: 'read', arguments: '{}' })
    const result = session.append('tool/result', { turn: 1, step: 1, message: toolResult('c1') })
    session.append('steering/message', { message: user('steer') })
    session.append('step/end', { turn: 1, step: 1 })
    session.append('step/start', { turn: 1, step: 2 })
    answer(session, 1, 2, []) // an empty anchor (e.g. a failed call) is log-only
    session.append('step/end', { turn: 1, step: 2 })
    session.append('step/start', { turn: 1, step: 3 })
    const final = answer(session, 1, 3, 'done')
    session.append('step/end', { turn: 1, step: 3 })
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    session.append('todo/write', { todos: [] })
    expect(chunk.data.chunk.type).toBe('text-delta')
    const messages = session.deriveMessages()
    expect(texts(messages)).toEqual(['question', 'let me look+tool-call', 'tool-result', 'steer', 'done'])
    expect(messages[1]).toBe(call.data.message)
    expect(messages[2]).toBe(result.data.message)
    expect(messages[4]).toBe(final.data.message)
    expect(messages.every(Object.isFrozen)).toBe(true)
  })

  it('returns an immutable snapshot: later appends do not change it, entries keep their identity, nothing new means the same snapshot', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    closedTurn(session, 1)
    const history = session.deriveMessages()
    const [first, second] = history
    expect(session.deriveMessages()).toBe(history)
    session.append('todo/write', { todos: [] }) // log-only: the history did not change
    expect(session.deriveMessages()).toBe(history)
    closedTurn(session, 2)
    const later = session.deriveMessages()
    expect(texts(history)).toEqual(['q1', 'answer 1'])
    expect(texts(later)).toEqual(['q1', 'answer 1', 'q2', 'answer 2'])
    expect(later[0]).toBe(first)
    expect(later[1]).toBe(second)
    expect(historyOf(later)).toBe(historyOf(history))
    expect(historyOf(history)).toBeTypeOf('object')
  })

  it('runs a registered projector for a merged type, in log order', async () => {
    const root = await setup()
    const projector = (event: { seq: number; data: { text: string } }) => ({ messages: [user(`reminder: ${event.data.text}`, `rem-${event.seq}`)] })
    root.sessions.projector('test/reminder', projector)
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1, 'q')
    session.append('test/reminder', { text: 'be brief' })
    session.append('steering/message', { message: user('s') })
    expect(texts(session.deriveMessages())).toEqual(['q', 'reminder: be brief', 's'])
    expect(root.sessions.typeInfo('test/reminder')).toEqual({ type: 'test/reminder', builtIn: false, ignorable: false, projected: true, projector })
  })

  it('a shadowing projector replaces earlier history in a new history and leaves the old snapshots untouched', async () => {
    const root = await setup()
    root.sessions.projector('test/compaction', compaction)
    const session = root.sessions.create(SessionId('s'))
    closedTurn(session, 1) // seqs 1..6: q1 at 2, answer 1 at 4
    closedTurn(session, 2) // seqs 7..12: q2 at 8, answer 2 at 10
    const before = session.deriveMessages()
    const snapshot = [...before]
    session.append('test/compaction', { from: 0, to: 7, summary: 'turn 1 in short' })
    const after = session.deriveMessages()
    expect(after).not.toBe(before)
    expect(before).toEqual(snapshot)
    expect(before.length).toBe(4)
    expect(texts(after)).toEqual(['turn 1 in short', 'q2', 'answer 2'])
    expect(after[1]).toBe(snapshot[2])
    // The rewrite started a new history: an incremental reader keyed on the old one starts over.
    expect(historyOf(after)).not.toBe(historyOf(before))
    closedTurn(session, 3)
    const latest = session.deriveMessages()
    expect(texts(after)).toEqual(['turn 1 in short', 'q2', 'answer 2'])
    expect(texts(latest)).toEqual(['turn 1 in short', 'q2', 'answer 2', 'q3', 'answer 3'])
    expect(historyOf(latest)).toBe(historyOf(after))
  })

  it('a later shadow that covers an earlier replacement replaces it too', async () => {
    const root = await setup()
    root.sessions.projector('test/compaction', compaction)
    const session = root.sessions.create(SessionId('s'))
    closedTurn(session, 1)
    closedTurn(session, 2)
    session.append('test/compaction', { from: 0, to: 7, summary: 'first' }) // seq 13, placed at 0
    closedTurn(session, 3) // seqs 14..19
    expect(texts(session.deriveMessages())).toEqual(['first', 'q2', 'answer 2', 'q3', 'answer 3'])
    session.append('test/compaction', { from: 0, to: 14, summary: 'second' })
    expect(texts(session.deriveMessages())).toEqual(['second', 'q3', 'answer 3'])
    session.append('test/compaction', { from: 14, to: 14, summary: 'inserted' })
    expect(texts(session.deriveMessages())).toEqual(['second', 'inserted', 'q3', 'answer 3'])
  })

  it('a projector that throws, returns garbage or appends refuses the event (PROJECTION_FAILED), leaving the log unchanged', async () => {
    const root = await setup()
    let behaviour: (session: Session) => ReturnType<SessionProjector> = () => undefined
    root.sessions.projector('test/reminder', (_event, session) => behaviour(session))
    const session = root.sessions.create(SessionId('s'))
    closedTurn(session, 1)
    const data = { text: 'x' }
    behaviour = () => {
      throw new Error('projector bug')
    }
    expectRefused(session, 'test/reminder', data, 'PROJECTION_FAILED', /the projector of test\/reminder threw: projector bug/)
    behaviour = () => ({ shadow: { from: 3, to: 1 } })
    expectRefused(session, 'test/reminder', data, 'PROJECTION_FAILED', /0 ≤ from ≤ to ≤ 7/)
    behaviour = () => ({ shadow: { from: 0, to: 8 } })
    expectRefused(session, 'test/reminder', data, 'PROJECTION_FAILED', /got \{ from: 0, to: 8 \}/)
    behaviour = () => ({ messages: [{ id: 'm', role: 'system', content: [], source: { kind: 'user' } } as never] })
    expectRefused(session, 'test/reminder', data, 'PROJECTION_FAILED', /messages\[0\]\.role must be 'user' or 'assistant'/)
    behaviour = () => ({ messages: [user('x'), { ...user('y'), source: {} } as never] })
    expectRefused(session, 'test/reminder', data, 'PROJECTION_FAILED', /invalid projection: messages\[1\]\.source\.kind must be a non-empty string$/)
    behaviour = () => ({ messages: [{ ...user('x'), extra: undefined } as never] })
    expectRefused(session, 'test/reminder', data, 'PROJECTION_FAILED', /messages\[0\]\.extra is undefined/)
    behaviour = (s) => {
      s.append('todo/write', { todos: [] })
      return undefined
    }
    const error = expectRefused(session, 'test/reminder', data, 'PROJECTION_FAILED', /projectors must not append/)
    expect((error.cause as { code?: string }).code).toBe('REENTRANT_APPEND')
    behaviour = () => ({ messages: [user('fine', 'fine')] })
    session.append('test/reminder', data)
    expect(texts(session.deriveMessages())).toEqual(['q1', 'answer 1', 'fine'])
  })

  it('a projector registration reverts with the fiber that made it', async () => {
    const root = await setup()
    const plugin = root.plugin({ inject: ['sessions'], apply: (ctx: Context) => void ctx.sessions.projector('test/compaction', compaction) })
    await plugin
    expect(root.sessions.typeInfo('test/compaction')?.projected).toBe(true)
    await plugin.dispose()
    expect(root.sessions.typeInfo('test/compaction')).toBeUndefined()
  })

  it('a loaded session derives exactly the history the live one had, projectors included', async () => {
    const root = await setup()
    root.sessions.projector('test/compaction', compaction)
    const live = root.sessions.create(SessionId('s'))
    closedTurn(live, 1)
    closedTurn(live, 2)
    live.append('test/compaction', { from: 0, to: 7, summary: 'short' })
    closedTurn(live, 3)
    const parsed = JSON.parse(JSON.stringify(live.events))
    const loaded = root.sessions.prepare(SessionId('s2'), { events: parsed })
    expect(loaded.deriveMessages()).toEqual(live.deriveMessages())
    expect(texts(loaded.deriveMessages())).toEqual(['short', 'q2', 'answer 2', 'q3', 'answer 3'])
  })
})
