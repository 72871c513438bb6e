import { describe, expect, it } from 'vitest'
import { SessionError } from '@deepseek-ai/dsh-session'
import { closedTurn, setup } from './helpers'

describe('ctx.sessions.claim: a flush is never silently unpersisted (issue 16)', () => {
  it('a claimed session flushes while a claim holds it, and rejects with PERSISTENCE_DETACHED once the last claim is released while it lives', async () => {
    const root = await setup()
    const session = root.sessions.create('a')
    const release = root.sessions.claim(session, 'test-backend')
    await root.sessions.flush(session)
    release()
    closedTurn(session, 1)
    const error = (await root.sessions.flush(session).catch((caught) => caught)) as SessionError
    expect(error).toBeInstanceOf(SessionError)
    expect({ code: error.code, message: error.message }).toEqual({
      code: 'PERSISTENCE_DETACHED',
      message:
        'session "a" is no longer persisted: test-backend stopped writing it while it is live (its plugin was unloaded), so nothing appended since is stored; mount a persistence backend again (it takes the session on at its next event or flush) or dispose the session',
    })
  })

  it('a session nobody ever claimed flushes as before, with or without listeners', async () => {
    const root = await setup()
    const session = root.sessions.create('a')
    await root.sessions.flush(session)
    let heard = 0
    root.on('session/flush', () => void heard++)
    await root.sessions.flush(session)
    expect(heard).toBe(1)
  })

  it('claims stack: the session stays persisted until every claim is released; a new claim makes it persisted again', async () => {
    const root = await setup()
    const session = root.sessions.create('a')
    const first = root.sessions.claim(session, 'one')
    const second = root.sessions.claim(session, 'two')
    first()
    first() // harmless twice
    await root.sessions.flush(session)
    second()
    await expect(root.sessions.flush(session)).rejects.toMatchObject({ code: 'PERSISTENCE_DETACHED', message: expect.stringContaining('two stopped writing it') })
    const again = root.sessions.claim(session, 'three')
    await root.sessions.flush(session)
    again()
  })

  it('the listeners still run first, and a listener failure is reported as FLUSH_FAILED', async () => {
    const root = await setup()
    const session = root.sessions.create('a')
    root.sessions.claim(session, 'gone')()
    const seen: string[] = []
    root.on('session/flush', (flushed) => void seen.push(flushed.id))
    await expect(root.sessions.flush(session)).rejects.toMatchObject({ code: 'PERSISTENCE_DETACHED' })
    root.on('session/flush', async () => {
      throw new Error('disk full')
    })
    await expect(root.sessions.flush(session)).rejects.toMatchObject({ code: 'FLUSH_FAILED' })
    expect(seen).toEqual(['a', 'a'])
  })

  it('a detached session has nothing to flush, whatever its claims', async () => {
    const root = await setup()
    const session = root.sessions.prepare('a')
    const detach = root.sessions.enter(session)
    root.sessions.claim(session, 'gone')()
    detach()
    await root.sessions.flush(session)
  })

  it('refuses a session of another store and a holder without a name (INVALID_ARGUMENT)', async () => {
    const root = await setup()
    const other = await setup()
    const foreign = other.sessions.create('x')
    expect(() => root.sessions.claim(foreign, 'b')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    const session = root.sessions.create('a')
    expect(() => root.sessions.claim(session, '')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
  })
})
