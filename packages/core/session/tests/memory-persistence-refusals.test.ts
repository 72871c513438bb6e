import { Context } from 'cordis'
import { describe, expect, it, vi } from 'vitest'
import Sessions, { MemorySessionPersistence, SessionId, type AnySessionEvent, type Session } from '@deepseek-ai/dsh-session'
import { closedTurn, openTurn } from './helpers'

// The memory backend stands in for dsh-session-jsonl and dsh-session-postgres in users' tests, so it
// refuses what they refuse, with the same codes: a test that passes on it must not fail on a file.

const plain = (events: readonly AnySessionEvent[]) => JSON.parse(JSON.stringify(events)) as AnySessionEvent[]

async function log(id = 's', turns = 1): Promise<Session> {
  const root = new Context()
  await root.plugin(Sessions)
  const session = root.sessions.prepare(SessionId(id))
  for (let turn = 1; turn <= turns; turn++) closedTurn(session, turn)
  return session
}

async function stored(id = 's', turns = 1) {
  const backend = new MemorySessionPersistence()
  const session = await log(id, turns)
  await backend.append(session.id, session.events)
  await backend.flush(session.id)
  return { backend: backend.reopen(), session }
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a rejection')
    },
    (error: { code?: unknown; message?: unknown }) => ({ code: error.code, message: error.message }),
  )

describe('MemorySessionPersistence refuses what the file backends refuse', () => {
  it('a new log (from seq 0) over a stored id it has not loaded is SESSION_EXISTS, and the stored log is untouched', async () => {
    const { backend, session } = await stored()
    const fresh = await log('s', 2)
    expect(await failure(backend.append(session.id, fresh.events))).toEqual({
      code: 'SESSION_EXISTS',
      message: expect.stringContaining('"s" already exists'),
    })
    await backend.flush(session.id)
    expect((await backend.load(session.id)).events).toEqual(plain(session.events))
  })

  it('after a load, appends continue where the log ends; a new log from seq 0 is still SESSION_EXISTS', async () => {
    const session = await log('s', 2)
    const firstTurn = (await log('s', 1)).events.length
    const first = new MemorySessionPersistence()
    await first.append(session.id, session.events.slice(0, firstTurn))
    await first.flush(session.id)
    const restarted = first.reopen()
    await restarted.load(session.id)
    expect(await failure(restarted.append(session.id, session.events))).toMatchObject({ code: 'SESSION_EXISTS' })
    await restarted.append(session.id, session.events.slice(firstTurn))
    await restarted.flush(session.id)
    expect((await restarted.reopen().load(session.id)).events).toEqual(plain(session.events))
  })

  it('appends that do not continue the log are INVALID_APPEND naming the seq, and queue nothing', async () => {
    const backend = new MemorySessionPersistence()
    const session = await log('s', 2)
    const events = session.events
    expect(await failure(backend.append(session.id, events.slice(1)))).toEqual({
      code: 'INVALID_APPEND',
      message: expect.stringContaining('seq 0'),
    })
    const noMeta = events.slice(1, 3).map((event, seq) => ({ ...event, seq })) as AnySessionEvent[]
    expect(await failure(backend.append(session.id, noMeta))).toEqual({
      code: 'INVALID_APPEND',
      message: 'cannot append to session "s": seq 0 must be its session/meta (got turn/start); nothing was queued',
    })
    await backend.append(session.id, events.slice(0, 3))
    expect(await failure(backend.append(session.id, [events[3]!, events[5]!]))).toEqual({
      code: 'INVALID_APPEND',
      message: expect.stringContaining('expected seq 4, got 5'),
    })
    expect(await failure(backend.append(session.id, events.slice(1, 4)))).toMatchObject({ code: 'INVALID_APPEND' })
    const cyclic = { ...events[3]!, data: {} as Record<string, unknown> }
    cyclic.data.self = cyclic.data
    expect(await failure(backend.append(session.id, [events[3]!, cyclic as AnySessionEvent]))).toMatchObject({ code: 'INVALID_APPEND' })
    // None of the refused batches left anything behind: the log continues at seq 3.
    await backend.append(session.id, events.slice(3))
    await backend.flush(session.id)
    expect((await backend.load(session.id)).events).toEqual(plain(events))
  })

  it('a flush whose stored log changed under it (another instance over the same storage wrote it) fails, and so does every later one', async () => {
    const session = await log('s', 2)
    const firstTurn = (await log('s', 1)).events.length
    const first = new MemorySessionPersistence()
    await first.append(session.id, session.events.slice(0, firstTurn))
    await first.flush(session.id)
    // A second process loads and continues the session while the first still holds it.
    const second = first.reopen()
    await second.load(session.id)
    await second.append(session.id, session.events.slice(firstTurn))
    await second.flush(session.id)
    await first.append(session.id, session.events.slice(firstTurn))
    expect(await failure(first.flush(session.id))).toEqual({ code: 'INVALID_APPEND', message: expect.stringContaining('changed') })
    expect(await failure(first.flush(session.id))).toMatchObject({ code: 'INVALID_APPEND' })
    expect((await second.reopen().load(session.id)).events).toEqual(plain(session.events))
  })

  it('two loads of a crashed session at once store its repair once: the second one finds the repaired log (loads of one id run one after the other)', async () => {
    const session = await log('s', 1)
    openTurn(session, 2)
    const first = new MemorySessionPersistence()
    await first.append(session.id, session.events)
    await first.flush(session.id)
    const restarted = first.reopen()
    const [a, b] = await Promise.all([restarted.load(session.id), restarted.load(session.id)])
    expect([a.repairs, b.repairs]).toEqual([[{ seq: 9, type: 'turn/end', detail: 'closed turn 2 as interrupted' }], []])
    expect(b.events).toEqual(a.events)
    expect((await restarted.reopen().load(session.id)).events.map((event) => event.seq)).toEqual(a.events.map((_event, seq) => seq))
  })

  it('load drains what was appended and not flushed yet, as the file backends do before they read', async () => {
    const backend = new MemorySessionPersistence()
    const session = await log()
    await backend.append(session.id, session.events)
    expect(await backend.exists(session.id)).toBe(true)
    expect(await backend.load(session.id)).toEqual({ id: session.id, events: plain(session.events), repairs: [], warnings: [] })
  })

  it('lists the most recently written session first, and sessions appended but not flushed yet', async () => {
    const backend = new MemorySessionPersistence()
    const a = await log('a')
    const b = await log('b')
    const c = await log('c')
    // The clock only (timers and promises stay real): b written at 1,000, a at 2,000, c appended and listed at 3,000.
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime(1_000)
      await backend.append(b.id, b.events)
      await backend.flush(b.id)
      vi.setSystemTime(2_000)
      await backend.append(a.id, a.events)
      await backend.flush(a.id)
      vi.setSystemTime(3_000)
      await backend.append(c.id, c.events)
      const listed = await backend.list()
      expect(listed.map((info) => [info.id, info.updatedAt])).toEqual([
        ['c', 3_000],
        ['a', 2_000],
        ['b', 1_000],
      ])
    } finally {
      vi.useRealTimers()
    }
  })
})
