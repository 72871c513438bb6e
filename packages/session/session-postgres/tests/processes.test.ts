import { afterEach, describe, expect, it } from 'vitest'
import { SessionId, type AnySessionEvent } from '@deepseek-ai/dsh-session'
import { Holder } from './children'
import { dropSchema, freshSchema, mount, pgUrl, until, withSql } from './helpers'

/**
 * R-PG-2 with real processes: each `Holder` is a child process writing
 * sessions through the backend, driven over IPC. Lease expiry is waited for
 * by polling the database (never by a fixed sleep).
 */
const holders: Holder[] = []
const cleanups: Array<() => Promise<void>> = []

afterEach(async () => {
  for (const holder of holders.splice(0)) {
    if (holder.child.exitCode === null && holder.child.signalCode === null) {
      holder.kill('SIGCONT')
      holder.kill('SIGKILL')
    }
    await holder.exited()
  }
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

async function setup(skip: (condition: boolean, note?: string) => void) {
  const url = pgUrl(skip)
  const schema = freshSchema()
  const parent = await mount(url, schema)
  cleanups.push(async () => {
    await parent.fiber.dispose()
    await dropSchema(url, schema)
  })
  const spawn = async () => {
    const holder = new Holder(url, schema)
    holders.push(holder)
    expect(await holder.next()).toEqual({ ready: expect.any(String) })
    return holder
  }
  return { url, schema, parent, spawn }
}

/** Loads `id` in `backend` once the former holder's lease has expired (polling while it answers SESSION_LOCKED). */
async function takeOver(backend: { load(id: SessionId): Promise<{ events: readonly AnySessionEvent[]; repairs: readonly unknown[] }> }, id: SessionId) {
  return until(async () => {
    try {
      return await backend.load(id)
    } catch (error) {
      if ((error as { code?: string }).code === 'SESSION_LOCKED') return undefined
      throw error
    }
  }, `the lease of ${id} to expire`)
}

const epochOf = (url: string, schema: string, id: string) =>
  withSql(url, async (sql) => Number((await sql.unsafe(`SELECT epoch FROM "${schema}".leases WHERE session_id = $1`, [id]))[0]!.epoch))

describe('one writer per session, across processes (R-PG-2)', () => {
  it('two processes loading one session at once: exactly one gets it and writes, the other gets SESSION_LOCKED', async ({ skip }) => {
    const { url, schema, parent, spawn } = await setup(skip)
    const id = SessionId('contended')
    const session = parent.ctx.sessions.prepare(id, { meta: { cwd: '/work' } })
    const detach = parent.ctx.sessions.enter(session)
    session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    await parent.ctx.sessions.flush(session)
    detach()
    // The parent's writer closes in the background and gives the lease back.
    await until(
      () => withSql(url, async (sql) => ((await sql.unsafe(`SELECT expires_at <= clock_timestamp() AS free FROM "${schema}".leases`))[0]?.free ? true : undefined)),
      'the parent to release the lease',
    )
    const [a, b] = [await spawn(), await spawn()]
    const replies = await Promise.all([a.send({ cmd: 'load', id }), b.send({ cmd: 'load', id })])
    expect(replies.map((reply) => (reply.ok ? 'loaded' : reply.error)).sort()).toEqual(['SESSION_LOCKED', 'loaded'])
    const [winner, loser] = replies[0]!.ok ? [a, b] : [b, a]
    expect(await winner.send({ cmd: 'chunks', count: 3 })).toEqual({ ok: true, length: 9 })
    expect(await loser.send({ cmd: 'load', id })).toMatchObject({ error: 'SESSION_LOCKED' })
    // A third process is refused too while the winner lives.
    await expect(parent.backend.load(id)).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
    const stored = await withSql(url, (sql) => sql.unsafe(`SELECT count(*)::int AS n FROM "${schema}".events WHERE session_id = $1`, [id]))
    expect(stored[0]!.n).toBe(9)
  })

  it('a live holder keeps its session: its heartbeat renews the lease past its first expiry, same holder and epoch, and others stay locked out', async ({ skip }) => {
    const { url, schema, parent, spawn } = await setup(skip)
    const id = SessionId('kept')
    const holder = await spawn()
    expect(await holder.send({ cmd: 'create', id })).toMatchObject({ ok: true })
    type Lease = { holder: string; epoch: number; expires_at: Date; past: boolean }
    /** The lease row, and whether the server's clock is past `since`. */
    const lease = (since: Date) =>
      withSql(url, async (sql) => {
        const [row] = await sql.unsafe<Lease[]>(
          `SELECT holder, epoch::int AS epoch, expires_at, clock_timestamp() > $2::timestamptz AS past FROM "${schema}".leases WHERE session_id = $1`,
          [id, since],
        )
        return row!
      })
    const first = await lease(new Date(0))
    // Wait (on the server's clock) until the first expiry has passed: the lease is still the holder's.
    const later = await until(async () => {
      const current = await lease(first.expires_at)
      return current.past ? current : undefined
    }, 'the first expiry to pass')
    expect(later).toMatchObject({ holder: first.holder, epoch: first.epoch })
    expect(later.expires_at.getTime()).toBeGreaterThan(first.expires_at.getTime())
    await expect(parent.backend.load(id)).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
    expect(await holder.send({ cmd: 'chunks', count: 1 })).toMatchObject({ ok: true })
  })

  it('the holder SIGKILLed mid-turn: after its lease expires another process takes over with a raised epoch, nothing flushed is lost, the open turn is repaired', async ({ skip }) => {
    const { url, schema, parent, spawn } = await setup(skip)
    const id = SessionId('killed')
    const holder = await spawn()
    expect(await holder.send({ cmd: 'create', id })).toMatchObject({ ok: true })
    const epoch = await epochOf(url, schema, id)
    holder.child.send({ cmd: 'stream' })
    await holder.flushedAtLeast(40)
    holder.kill('SIGKILL')
    await holder.exited()
    const flushed = holder.flushed
    const loaded = await takeOver(parent.backend, id)
    expect(await epochOf(url, schema, id)).toBe(epoch + 1)
    // Everything a completed flush reported is there; the repair closed the open step and turn.
    const stored = loaded.events.length - loaded.repairs.length
    expect(stored).toBeGreaterThanOrEqual(flushed)
    expect(loaded.events.slice(stored).map((event) => event.type)).toEqual(['step/end', 'turn/end'])
    expect(loaded.events.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: 1, reason: { kind: 'interrupted' } } })
    expect(loaded.events.map((event) => event.seq)).toEqual(loaded.events.map((_event, index) => index))
  })

  it('a holder paused with SIGSTOP until its lease is taken over can never write again: resumed, its flush is refused with LEASE_LOST', async ({ skip }) => {
    const { url, schema, parent, spawn } = await setup(skip)
    const id = SessionId('paused')
    const holder = await spawn()
    expect(await holder.send({ cmd: 'create', id })).toMatchObject({ ok: true })
    expect(await holder.send({ cmd: 'chunks', count: 5 })).toEqual({ ok: true, length: 9 })
    holder.kill('SIGSTOP')
    // The stopped process keeps its connection; only the lease's expiry lets the parent in.
    const loaded = await takeOver(parent.backend, id)
    expect(loaded.events.length).toBe(11) // 9 stored + step/end + turn/end of the repair
    const resumed = parent.ctx.sessions.prepare(id, { events: loaded.events })
    parent.ctx.sessions.enter(resumed)
    resumed.append('turn/start', { turn: 2, trigger: { kind: 'prompt' } })
    await parent.ctx.sessions.flush(resumed)
    holder.kill('SIGCONT')
    const late = await holder.send({ cmd: 'chunks', count: 2 })
    expect(late).toMatchObject({ error: 'LEASE_LOST' })
    // The stored log is the parent's: nothing of the former holder after the takeover.
    const stored = await withSql(url, (sql) => sql.unsafe(`SELECT line FROM "${schema}".events WHERE session_id = $1 ORDER BY seq`, [id]))
    expect(stored.map((row) => (JSON.parse(row.line as string) as AnySessionEvent).type)).toEqual(resumed.events.map((event) => event.type))
    expect(stored).toHaveLength(12)
  })
})
