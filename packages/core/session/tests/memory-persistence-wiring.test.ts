import { Context } from 'cordis'
import { scoped } from '@deepseek-ai/dsh-scope'
import { describe, expect, it } from 'vitest'
import Sessions, { MemorySessionPersistence, memoryPersistence, SessionId, type AnySessionEvent } from '@deepseek-ai/dsh-session'
import { captureLogs, closedTurn, openTurn } from './helpers'

// memoryPersistence is wired to live sessions the way dsh-session-jsonl and dsh-session-postgres are
// (dsh-session's persistLiveSessions), so a veto, a second writer, an unplugged backend or the
// app's teardown look the same in a user's test as in production.

const plain = (events: readonly AnySessionEvent[]) => JSON.parse(JSON.stringify(events)) as AnySessionEvent[]

async function app(backend: MemorySessionPersistence) {
  const ctx = new Context()
  await ctx.plugin(Sessions)
  const fiber = ctx.plugin(memoryPersistence, { backend })
  await fiber
  return { ctx, unplug: () => fiber.dispose() }
}

function vetoOf(run: () => unknown): { code?: unknown } {
  try {
    run()
  } catch (error) {
    return error as { code?: unknown }
  }
  throw new Error('expected the publication to be vetoed')
}

describe('memoryPersistence refuses what the file backends refuse', () => {
  it('a fresh live session over a stored id is vetoed with SESSION_EXISTS, and the stored log is untouched', async () => {
    const backend = new MemorySessionPersistence()
    const first = await app(backend)
    const session = first.ctx.sessions.create('taken')
    closedTurn(session, 1)
    await first.ctx.sessions.flush(session)
    await first.unplug()

    const second = await app(backend.reopen())
    expect(vetoOf(() => second.ctx.sessions.create('taken')).code).toBe('SESSION_EXISTS')
    expect(second.ctx.sessions.get(SessionId('taken'))).toBeUndefined()
    expect((await backend.reopen().load(SessionId('taken'))).events).toEqual(plain(session.events))
  })

  it('a resumed session goes live only from a load of this backend; it continues after the loaded events', async () => {
    const backend = new MemorySessionPersistence()
    const first = await app(backend)
    const session = first.ctx.sessions.create('resumed')
    closedTurn(session, 1)
    await first.ctx.sessions.flush(session)
    await first.unplug()

    const second = await app(backend.reopen())
    // Events taken from somewhere else than a load: the backend would store a log it did not read.
    const blind = second.ctx.sessions.prepare('resumed', { events: session.events })
    expect(vetoOf(() => second.ctx.sessions.enter(blind)).code).toBe('SESSION_EXISTS')
    const loaded = await second.ctx.sessionPersistence.load(SessionId('resumed'))
    const resumed = second.ctx.sessions.prepare('resumed', { events: loaded.events })
    const detach = second.ctx.sessions.enter(resumed)
    closedTurn(resumed, 2)
    await second.ctx.sessions.flush(resumed)
    detach()
    expect((await backend.reopen().load(SessionId('resumed'))).events).toEqual(plain(resumed.events))
  })

  it('one writer per session: a second live session with the id (another app on the same backend) is vetoed SESSION_LOCKED, and direct append and load of a live id are refused', async () => {
    const backend = new MemorySessionPersistence()
    const a = await app(backend)
    const b = await app(backend)
    const live = a.ctx.sessions.create('shared')
    expect(vetoOf(() => b.ctx.sessions.create('shared')).code).toBe('SESSION_LOCKED')
    await expect(backend.load(SessionId('shared'))).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
    await expect(backend.append(SessionId('shared'), [live.events[0]!])).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
    closedTurn(live, 1)
    await a.ctx.sessions.flush(live)
    expect((await backend.reopen().load(SessionId('shared'))).events).toEqual(plain(live.events))
  })

  it('direct appends hold the id until they are released or loaded: a live session over it is vetoed SESSION_LOCKED until then', async () => {
    const backend = new MemorySessionPersistence()
    const { ctx } = await app(backend)
    const written = ctx.sessions.prepare(SessionId('direct'))
    closedTurn(written, 1)
    await backend.append(written.id, written.events)
    expect(vetoOf(() => ctx.sessions.enter(ctx.sessions.prepare('direct', { events: written.events }))).code).toBe('SESSION_LOCKED')
    await backend.release(written.id)
    const loaded = await backend.load(written.id)
    const resumed = ctx.sessions.prepare('direct', { events: loaded.events })
    const detach = ctx.sessions.enter(resumed)
    closedTurn(resumed, 2)
    detach()
    await ctx.sessionPersistence.flush(resumed.id)
    expect((await backend.reopen().load(resumed.id)).events).toEqual(plain(resumed.events))
  })

  it('listens globally: sessions reach it even when it is mounted in an agent-scoped context', async () => {
    const backend = new MemorySessionPersistence()
    const ctx = new Context()
    await ctx.plugin(Sessions)
    await scoped(ctx, 'some-agent').plugin(memoryPersistence, { backend })
    const session = ctx.sessions.create('other-agent')
    closedTurn(session, 1)
    await ctx.sessions.flush(session)
    expect((await backend.reopen().load(SessionId('other-agent'))).events).toEqual(plain(session.events))
  })

  it('a publication vetoed by another listener stores nothing and leaves the id free', async () => {
    const backend = new MemorySessionPersistence()
    const { ctx } = await app(backend)
    const dispose = ctx.on('session/created', () => {
      throw new Error('policy says no')
    })
    expect(() => ctx.sessions.create('vetoed')).toThrow('policy says no')
    dispose()
    await backend.flush(SessionId('vetoed'))
    expect(await backend.exists(SessionId('vetoed'))).toBe(false)
    const session = ctx.sessions.create('vetoed')
    closedTurn(session, 1)
    await ctx.sessions.flush(session)
    expect((await backend.reopen().load(SessionId('vetoed'))).events).toEqual(plain(session.events))
  })

  it('a session whose backend was unplugged says so: its flushes reject PERSISTENCE_DETACHED', async () => {
    const backend = new MemorySessionPersistence()
    const { ctx, unplug } = await app(backend)
    const live = ctx.sessions.create('before')
    closedTurn(live, 1)
    await unplug()
    closedTurn(live, 2)
    await expect(ctx.sessions.flush(live)).rejects.toMatchObject({ code: 'PERSISTENCE_DETACHED' })
    expect((await backend.reopen().load(SessionId('before'))).events).toEqual(plain(live.events.slice(0, 7)))
  })

  it('a re-plugged backend continues a live session where the previous instance stopped', async () => {
    const backend = new MemorySessionPersistence()
    const ctx = new Context()
    await ctx.plugin(Sessions)
    const session = ctx.sessions.create('reloaded')
    const first = ctx.plugin(memoryPersistence, { backend })
    await first
    closedTurn(session, 1)
    await first.dispose()
    closedTurn(session, 2) // no backend: not persisted yet
    await ctx.plugin(memoryPersistence, { backend })
    closedTurn(session, 3)
    await ctx.sessions.flush(session)
    expect((await backend.reopen().load(SessionId('reloaded'))).events).toEqual(plain(session.events))
  })

  it('a live session whose stored log changed under it (another instance wrote it) says so in the log once when its disposal cannot store the rest (nobody awaits that write)', async () => {
    const backend = new MemorySessionPersistence()
    const { ctx } = await app(backend)
    const logs = captureLogs(ctx)
    const session = ctx.sessions.prepare(SessionId('contested'))
    const detach = ctx.sessions.enter(session)
    closedTurn(session, 1)
    await ctx.sessions.flush(session)
    // Another process, believing this one dead, loads the session and continues it.
    const other = backend.reopen()
    const loaded = await other.load(session.id)
    await other.append(session.id, [{ ...loaded.events[1]!, seq: loaded.events.length } as AnySessionEvent])
    await other.flush(session.id)
    closedTurn(session, 2)
    detach()
    expect(logs.filter((line) => line.includes('session "contested" changed'))).toHaveLength(1)
  })

  it('disposing the app keeps writing a live session until its owner disposes it (the tail of a settling turn is stored)', async () => {
    const backend = new MemorySessionPersistence()
    const { ctx } = await app(backend)
    const session = ctx.sessions.prepare(SessionId('settling'))
    const detach = ctx.sessions.enter(session)
    openTurn(session, 1)
    await ctx.sessions.flush(session)
    const disposing = ctx.fiber.dispose()
    // The owner settles its turn while the app unloads.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
    session.append('turn/end', { turn: 1, reason: { kind: 'aborted' } })
    detach()
    await disposing
    expect((await backend.reopen().load(SessionId('settling'))).events).toEqual(plain(session.events))
  })
})
