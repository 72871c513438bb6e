import { describe, expect, it } from 'vitest'
import { SessionId } from '@deepseek-ai/dsh-session'
import { setup } from './helpers'

describe('ctx.sessions.flushes: whether a flush has anything to do (issue 18)', () => {
  it('is false with no persistence, true while a session/flush listener is mounted, false again once it is gone', async () => {
    const root = await setup()
    const session = root.sessions.create('a')
    const answers = [root.sessions.flushes(session)]
    const off = root.on('session/flush', () => {})
    answers.push(root.sessions.flushes(session))
    off()
    answers.push(root.sessions.flushes(session))
    expect(answers).toEqual([false, true, false])
  })

  it('is true for a session whose backend was unplugged while it lives (the flush rejects PERSISTENCE_DETACHED), false while a claim holds it with no listener', async () => {
    const root = await setup()
    const session = root.sessions.create('a')
    const release = root.sessions.claim(session, 'backend')
    const held = root.sessions.flushes(session)
    release()
    expect([held, root.sessions.flushes(session)]).toEqual([false, true])
    await expect(root.sessions.flush(session)).rejects.toMatchObject({ code: 'PERSISTENCE_DETACHED' })
  })

  it('is false for a private session (not entered yet) and true for a session of another store, whose flush rejects', async () => {
    const root = await setup()
    const other = await setup()
    const prepared = root.sessions.prepare(SessionId('p'))
    const foreign = other.sessions.create('f')
    expect([root.sessions.flushes(prepared), root.sessions.flushes(foreign)]).toEqual([false, true])
    await expect(root.sessions.flush(foreign)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
  })
})
