import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Sessions, { MemorySessionPersistence, memoryPersistence, SessionId } from '@deepseek-ai/dsh-session'
import { closedTurn, openTurn } from './helpers'

describe('MemorySessionPersistence', () => {
  it('loses what was appended but not flushed when it is reopened (a simulated crash)', async () => {
    const backend = new MemorySessionPersistence()
    const root = new Context()
    await root.plugin(Sessions)
    const session = root.sessions.prepare(SessionId('s'))
    closedTurn(session, 1)
    await backend.append(session.id, session.events.slice(0, 3))
    await backend.flush(session.id)
    await backend.append(session.id, session.events.slice(3))
    const restarted = backend.reopen()
    const loaded = await restarted.load(session.id)
    expect(loaded.events.map((event) => event.type)).toEqual(['session/meta', 'turn/start', 'user/message', 'turn/end'])
    expect(loaded.repairs).toEqual([{ seq: 3, type: 'turn/end', detail: 'closed turn 1 as interrupted' }])
  })

  it('lets a test resume a session in a fresh context, as after a restart', async () => {
    const backend = new MemorySessionPersistence()
    const first = new Context()
    await first.plugin(Sessions)
    await first.plugin(memoryPersistence, { backend })
    const session = first.sessions.create('s')
    closedTurn(session, 1)
    openTurn(session, 2)
    await first.sessions.flush(session)

    const second = new Context()
    await second.plugin(Sessions)
    await second.plugin(memoryPersistence, { backend: backend.reopen() })
    const loaded = await second.sessionPersistence.load(SessionId('s'))
    const resumed = second.sessions.prepare('s', { events: loaded.events })
    expect(resumed.position).toEqual({ lastTurn: 2, lastStep: 0 })
    expect(resumed.deriveMessages().map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
  })
})
