import { describe, expect, it } from 'vitest'
import { Context } from 'cordis'
import { scoped } from '@deepseek-ai/dsh-scope'
import { SessionError, SessionId, type Session } from '@deepseek-ai/dsh-session'
import { captureLogs, closedTurn, deferred, setup } from './helpers'

/** Records every session/* notification a global listener sees, as `name:id`. */
function record(root: Context): string[] {
  const seen: string[] = []
  root.on('session/created', (session) => void seen.push(`created:${session.id}`))
  root.on('session/disposed', (session) => void seen.push(`disposed:${session.id}`))
  return seen
}

describe('the store: prepare, enter, get, list', () => {
  it('a prepared session is private until entered; entering publishes it and announces session/created', async () => {
    const root = await setup()
    const seen = record(root)
    const session = root.sessions.prepare(SessionId('a'), { meta: { cwd: '/work' } })
    expect(session.meta).toEqual({ cwd: '/work', createdAt: expect.any(Number), version: 1 })
    expect(session.loadedLength).toBe(0)
    expect(root.sessions.get('a')).toBeUndefined()
    expect(seen).toEqual([])
    root.sessions.enter(session)
    expect(root.sessions.get('a')).toBe(session)
    expect(root.sessions.list()).toEqual([session])
    expect(seen).toEqual(['created:a'])
  })

  it('create publishes at once and detaches with the calling fiber', async () => {
    const root = await setup()
    const seen = record(root)
    let session: Session | undefined
    const owner = root.plugin({ inject: ['sessions'], apply: (ctx: Context) => void (session = ctx.sessions.create('a')) })
    await owner
    expect(root.sessions.get('a')).toBe(session)
    await owner.dispose()
    expect(root.sessions.get('a')).toBeUndefined()
    expect(seen).toEqual(['created:a', 'disposed:a'])
    expect(root.sessions.create('a')).not.toBe(session)
  })

  it('entering a second live session with the same id throws DUPLICATE_ID and announces nothing', async () => {
    const root = await setup()
    const seen = record(root)
    root.sessions.enter(root.sessions.prepare('a'))
    const twin = root.sessions.prepare('a')
    expect(() => root.sessions.enter(twin)).toThrow(expect.objectContaining({ code: 'DUPLICATE_ID' }))
    expect(seen).toEqual(['created:a'])
  })

  it('a session is entered at most once (ALREADY_ENTERED), and only into the store that built it', async () => {
    const root = await setup()
    const other = await setup()
    const session = root.sessions.prepare('a')
    expect(() => other.sessions.enter(session)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    const detach = root.sessions.enter(session)
    expect(() => root.sessions.enter(session)).toThrow(expect.objectContaining({ code: 'ALREADY_ENTERED' }))
    detach()
    expect(() => root.sessions.enter(session)).toThrow(expect.objectContaining({ code: 'ALREADY_ENTERED' }))
    expect(() => root.sessions.enter({ ...session } as Session)).toThrow(SessionError)
  })

  it('rejects an empty id and contradictory prepare options', async () => {
    const root = await setup()
    expect(() => root.sessions.prepare('')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    const events = root.sessions.prepare('x').events
    expect(() => root.sessions.prepare('y', { events, meta: {} })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/cannot be combined/) }))
  })
})

describe('detach', () => {
  it('emits session/disposed once, frees the id, and is harmless to call again', async () => {
    const root = await setup()
    const seen = record(root)
    const detach = root.sessions.enter(root.sessions.prepare('a'))
    detach()
    detach()
    expect(root.sessions.get('a')).toBeUndefined()
    expect(seen).toEqual(['created:a', 'disposed:a'])
  })

  it('a stale detach never removes a later session with the same id', async () => {
    const root = await setup()
    const seen = record(root)
    const first = root.sessions.prepare('a')
    const detachFirst = root.sessions.enter(first)
    detachFirst()
    const second = root.sessions.prepare('a')
    root.sessions.enter(second)
    detachFirst()
    expect(root.sessions.get('a')).toBe(second)
    expect(seen).toEqual(['created:a', 'disposed:a', 'created:a'])
  })

  it('contains session/disposed listener failures', async () => {
    const root = await setup()
    const logs = captureLogs(root)
    const seen: string[] = []
    root.on('session/disposed', () => {
      throw new Error('cleanup broke')
    })
    root.on('session/disposed', (session) => void seen.push(session.id))
    root.sessions.enter(root.sessions.prepare('a'))()
    expect(seen).toEqual(['a'])
    expect(logs).toEqual([expect.stringMatching(/a session\/disposed listener failed \(session a\): Error: cleanup broke/)])
  })
})

describe('session/created is a step of the publish transaction', () => {
  it('a synchronous throw vetoes: the session is removed, session/disposed pairs the announcement, enter rethrows', async () => {
    const root = await setup()
    const seen: string[] = []
    const veto = new Error('not this one')
    root.on('session/created', (session) => void seen.push(`first saw ${session.id}`))
    const stopVetoing = root.on('session/created', () => {
      seen.push('vetoer')
      throw veto
    })
    root.on('session/created', () => void seen.push('after the veto'))
    root.on('session/disposed', (session) => void seen.push(`disposed ${session.id}`))
    const session = root.sessions.prepare('a')
    let thrown: unknown
    try {
      root.sessions.enter(session)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBe(veto)
    expect(seen).toEqual(['first saw a', 'vetoer', 'disposed a'])
    expect(root.sessions.get('a')).toBeUndefined()
    expect(() => session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })).toThrow(expect.objectContaining({ code: 'DETACHED' }))
    stopVetoing()
    root.sessions.enter(root.sessions.prepare('a'))
    expect(root.sessions.get('a')).toBeDefined()
  })

  it('create rethrows a veto and leaves nothing registered on the caller', async () => {
    const root = await setup()
    root.on('session/created', () => {
      throw new Error('no')
    })
    expect(() => root.sessions.create('a')).toThrow('no')
    expect(root.sessions.list()).toEqual([])
  })

  it('a rejected promise from a created listener is only logged', async () => {
    const root = await setup()
    const logs = captureLogs(root)
    root.on('session/created', async () => {
      throw new Error('async complaint')
    })
    const session = root.sessions.create('a')
    await new Promise((resolve) => setImmediate(resolve))
    expect(root.sessions.get('a')).toBe(session)
    expect(logs).toEqual([expect.stringMatching(/a session\/created listener rejected \(session a\): Error: async complaint/)])
  })

  it('a detach requested during the created notification waits until the dispatch unwinds, so created/disposed stay paired', async () => {
    const root = await setup()
    const seen: string[] = []
    const owner = root.plugin({ inject: ['sessions'], apply: () => {} })
    await owner
    root.on('session/created', (session) => {
      seen.push(`created(1) ${session.id}`)
      // The owner unloads while its session is being announced.
      void owner.dispose()
    })
    root.on('session/created', (session) => void seen.push(`created(2) ${session.id}`))
    root.on('session/disposed', (session) => void seen.push(`disposed ${session.id}`))
    const session = owner.ctx.sessions.create('a')
    seen.push('create returned')
    await owner.dispose()
    expect(seen).toEqual(['created(1) a', 'created(2) a', 'disposed a', 'create returned'])
    expect(root.sessions.get('a')).toBeUndefined()
    expect(session.events).toHaveLength(1)
  })
})

describe('flush (R-SES-5)', () => {
  it('dispatches session/flush in parallel and resolves only once every listener has settled', async () => {
    const root = await setup()
    const first = deferred()
    const second = deferred()
    const started: string[] = []
    root.on('session/flush', () => {
      started.push('first')
      return first.promise
    })
    root.on('session/flush', () => {
      started.push('second')
      return second.promise
    })
    const session = root.sessions.create('a')
    let settled = false
    const flushing = root.sessions.flush(session).then(() => void (settled = true))
    expect(started).toEqual(['first', 'second'])
    second.resolve()
    await new Promise((resolve) => setImmediate(resolve))
    expect(settled).toBe(false)
    first.resolve()
    await flushing
    expect(settled).toBe(true)
  })

  it('rejects with FLUSH_FAILED when a listener rejects, after the others settled', async () => {
    const root = await setup()
    const other = deferred()
    root.on('session/flush', async () => {
      throw new Error('disk full')
    })
    root.on('session/flush', () => other.promise)
    const session = root.sessions.create('a')
    const flushing = root.sessions.flush(session)
    let settled = false
    flushing.catch(() => {}).finally(() => void (settled = true))
    await new Promise((resolve) => setImmediate(resolve))
    expect(settled).toBe(false)
    other.resolve()
    await expect(flushing).rejects.toMatchObject({ code: 'FLUSH_FAILED', message: 'flushing session "a" failed: disk full' })
    // One listener failed: its error is the cause itself, and the only entry of `errors`.
    const error = (await flushing.catch((caught) => caught)) as SessionError
    expect(error.cause).toEqual(new Error('disk full'))
    expect(error.errors).toEqual([error.cause])
  })

  it('with several failing listeners, FLUSH_FAILED names them all: errors in listener order, their AggregateError as cause', async () => {
    const root = await setup()
    root.on('session/flush', async () => {
      throw new Error('disk full')
    })
    root.on('session/flush', async () => {
      throw new Error('replica down')
    })
    const session = root.sessions.create('a')
    const error = (await root.sessions.flush(session).catch((caught) => caught)) as SessionError
    expect({ code: error.code, message: error.message }).toEqual({ code: 'FLUSH_FAILED', message: 'flushing session "a" failed: disk full; replica down' })
    expect(error.errors).toEqual([new Error('disk full'), new Error('replica down')])
    expect(error.cause).toBeInstanceOf(AggregateError)
    expect((error.cause as AggregateError).errors).toEqual(error.errors)
  })

  it('a private or detached session has nothing to flush', async () => {
    const root = await setup()
    let flushed = 0
    root.on('session/flush', () => void flushed++)
    const session = root.sessions.prepare('a')
    await root.sessions.flush(session)
    root.sessions.enter(session)()
    await root.sessions.flush(session)
    expect(flushed).toBe(0)
  })
})

describe('scope filtering: every session/* event reaches global listeners and the listeners scoped to that session only', () => {
  it('session/created, session/event, session/flush and session/disposed', async () => {
    const root = await setup()
    const seen: string[] = []
    const listen = (ctx: Context, who: string) => {
      ctx.on('session/created', (session) => void seen.push(`${who} created ${session.id}`))
      ctx.on('session/event', (session, event) => void seen.push(`${who} event ${session.id}#${event.seq}`))
      ctx.on('session/flush', (session) => void seen.push(`${who} flush ${session.id}`))
      ctx.on('session/disposed', (session) => void seen.push(`${who} disposed ${session.id}`))
    }
    listen(root, 'global')
    listen(scoped(root, 'a'), 'scoped-a')
    listen(scoped(root, 'b'), 'scoped-b')
    for (const id of ['a', 'c']) {
      const session = root.sessions.prepare(id)
      const detach = root.sessions.enter(session)
      session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
      await root.sessions.flush(session)
      detach()
    }
    expect(seen).toEqual([
      'global created a',
      'scoped-a created a',
      'global event a#1',
      'scoped-a event a#1',
      'global flush a',
      'scoped-a flush a',
      'global disposed a',
      'scoped-a disposed a',
      'global created c',
      'global event c#1',
      'global flush c',
      'global disposed c',
    ])
  })

  it('a whole session lifecycle reads as one ordered stream to a scoped observer', async () => {
    const root = await setup()
    const seen: string[] = []
    const ctx = scoped(root, 'a')
    ctx.on('session/event', (_session, event) => void seen.push(event.type))
    const session = root.sessions.create('a')
    closedTurn(session, 1)
    expect(seen).toEqual(['turn/start', 'user/message', 'step/start', 'assistant/message', 'step/end', 'turn/end'])
  })
})
