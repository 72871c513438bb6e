import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Context } from 'cordis'
import Sessions, { SessionId, type AnySessionEvent, type Session } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'
import PostgresSessionPersistence, { SCHEMA_VERSION } from '@deepseek-ai/dsh-session-postgres'
import { createUserMessage } from '@deepseek-ai/dsh-llm'
import { dropSchema, freshSchema, mount, pgUrl, withSql } from './helpers'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function setup(skip: (condition: boolean, note?: string) => void) {
  const url = pgUrl(skip)
  const schema = freshSchema()
  cleanups.push(() => dropSchema(url, schema))
  const mounted = await mount(url, schema)
  cleanups.push(() => mounted.fiber.dispose())
  return { url, schema, ...mounted }
}

/** A turn whose data holds what a JSON store could get wrong: key order, escapes, NUL, a lone surrogate, astral characters. */
function trickyTurn(session: Session, turn: number): void {
  session.append('turn/start', { turn, trigger: { kind: 'prompt' } })
  session.append('user/message', { message: createUserMessage('zeta before alpha \u0000 \ud800 𝄞 "quoted" \\ back\nslash') })
  session.append('step/start', { turn, step: 1 })
  session.append('assistant/chunk', { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: 'émoji 🙂 and \t tab' } })
  session.append('step/end', { turn, step: 1 })
  session.append('turn/end', { turn, reason: { kind: 'completed' } })
}

const storedLines = (url: string, schema: string, id: string) =>
  withSql(url, async (sql) => (await sql.unsafe(`SELECT line FROM "${schema}".events WHERE session_id = $1 ORDER BY seq`, [id])).map((row) => row.line as string))

describe('storage (R-PG-1)', () => {
  it('stores each event as exactly the line the JSONL writer writes (text, not jsonb), and loads it back equal', async ({ skip }) => {
    const { url, schema, ctx } = await setup(skip)
    const directory = mkdtempSync(join(tmpdir(), 'dsh-pg-lines-'))
    cleanups.push(() => rmSync(directory, { recursive: true, force: true }))
    const jsonl = new Context()
    await jsonl.plugin(Sessions)
    const fiber = jsonl.plugin(JsonlSessionPersistence, { directory, flushIntervalMs: 60_000 })
    await fiber
    cleanups.push(() => fiber.dispose())
    // The same log, written by both backends.
    const session = ctx.sessions.prepare(SessionId('bytes'), { meta: { cwd: '/tmp/ü' } })
    const detach = ctx.sessions.enter(session)
    trickyTurn(session, 1)
    await ctx.sessions.flush(session)
    await jsonl.sessionPersistence.append(session.id, session.events)
    await jsonl.sessionPersistence.flush(session.id)
    const file = readFileSync(join(directory, 'bytes.jsonl'), 'utf8')
    expect((await storedLines(url, schema, 'bytes')).map((line) => line + '\n').join('')).toBe(file)
    detach()
    // Another holder: the lease was given back when the session was disposed, so it loads.
    const other = await mount(url, schema)
    cleanups.push(() => other.fiber.dispose())
    const loaded = await other.backend.load(session.id)
    expect(loaded.events).toEqual(JSON.parse(JSON.stringify([...session.events])))
  })

  it('a flush commits in one transaction: every event it wrote carries the same transaction id', async ({ skip }) => {
    const { url, schema, ctx } = await setup(skip)
    const session = ctx.sessions.prepare(SessionId('one-txn'))
    ctx.sessions.enter(session)
    trickyTurn(session, 1)
    trickyTurn(session, 2)
    await ctx.sessions.flush(session)
    const xids = await withSql(url, (sql) => sql.unsafe(`SELECT DISTINCT xmin::text AS x FROM "${schema}".events WHERE session_id = 'one-txn'`))
    expect(xids).toHaveLength(1)
    trickyTurn(session, 3)
    await ctx.sessions.flush(session)
    const counts = await withSql(url, (sql) =>
      sql.unsafe(`SELECT xmin::text AS x, count(*)::int AS n FROM "${schema}".events WHERE session_id = 'one-txn' GROUP BY xmin ORDER BY min(seq)`),
    )
    expect(counts.map((row) => row.n)).toEqual([13, 6])
  })

  it('migrations are versioned and idempotent: many starters at once apply each step once; a newer schema is refused', async ({ skip }) => {
    const url = pgUrl(skip)
    const schema = freshSchema()
    cleanups.push(() => dropSchema(url, schema))
    const starters = await Promise.all([mount(url, schema), mount(url, schema), mount(url, schema)])
    for (const { fiber } of starters) cleanups.push(() => fiber.dispose())
    await Promise.all(starters.map(({ backend }) => backend.list()))
    const applied = await withSql(url, (sql) => sql.unsafe(`SELECT version, description FROM "${schema}".migrations ORDER BY version`))
    expect(applied.map((row) => row.version)).toEqual([1, 2])
    expect(SCHEMA_VERSION).toBe(2)
    await withSql(url, (sql) => sql.unsafe(`INSERT INTO "${schema}".migrations (version, description) VALUES (999, 'from the future')`))
    const newer = await mount(url, schema)
    cleanups.push(() => newer.fiber.dispose())
    await expect(newer.backend.list()).rejects.toMatchObject({ code: 'UNSUPPORTED_SCHEMA' })
  })

  it('a schema at version 1 is migrated to version 2 on start: its sessions load unchanged, and deleting one removes its events without the foreign key', async ({ skip }) => {
    const { url, schema, ctx } = await setup(skip)
    const session = ctx.sessions.prepare(SessionId('from-v1'))
    const detach = ctx.sessions.enter(session)
    trickyTurn(session, 1)
    await ctx.sessions.flush(session)
    detach()
    const lines = await storedLines(url, schema, 'from-v1')
    // Back to what version 1 made: the foreign key, and no record of step 2.
    await withSql(url, (sql) =>
      sql.begin(async (tx) => {
        await tx.unsafe(`ALTER TABLE "${schema}".events ADD CONSTRAINT events_session_id_fkey FOREIGN KEY (session_id) REFERENCES "${schema}".sessions (id) ON DELETE CASCADE`)
        await tx.unsafe(`DELETE FROM "${schema}".migrations WHERE version = 2`)
      }),
    )
    const foreignKeys = () =>
      withSql(url, async (sql) =>
        (await sql.unsafe(`SELECT conname FROM pg_constraint WHERE conrelid = '"${schema}".events'::regclass AND contype = 'f'`)).map((row) => row.conname as string),
      )
    expect(await foreignKeys()).toEqual(['events_session_id_fkey'])
    const next = await mount(url, schema)
    cleanups.push(() => next.fiber.dispose())
    const loaded = await next.backend.load(session.id)
    expect(loaded.events).toEqual(JSON.parse(JSON.stringify([...session.events])))
    expect(await foreignKeys()).toEqual([])
    const applied = await withSql(url, (sql) => sql.unsafe(`SELECT version FROM "${schema}".migrations ORDER BY version`))
    expect(applied.map((row) => row.version)).toEqual([1, 2])
    expect(await storedLines(url, schema, 'from-v1')).toEqual(lines)
    await next.backend.release(session.id)
    await next.backend.delete(session.id)
    expect(await storedLines(url, schema, 'from-v1')).toEqual([])
    expect(await next.backend.exists(session.id)).toBe(false)
  })

  it('list() is one query the updated_at index serves', async ({ skip }) => {
    const { url, schema, backend } = await setup(skip)
    await backend.list()
    const plan = await withSql(url, async (sql) =>
      sql.begin(async (tx) => {
        await tx.unsafe('SET LOCAL enable_seqscan = off')
        return tx.unsafe(`EXPLAIN SELECT id, created_at, updated_at, cwd, parent_session FROM "${schema}".sessions ORDER BY updated_at DESC`)
      }),
    )
    expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/Index Scan using sessions_updated_at/)
  })

  it('a stored event that does not parse is CORRUPT_SESSION naming the seq, never its content; nothing is dropped', async ({ skip }) => {
    const { url, schema, ctx, backend } = await setup(skip)
    const session = ctx.sessions.prepare(SessionId('corrupt'))
    const detach = ctx.sessions.enter(session)
    trickyTurn(session, 1)
    await ctx.sessions.flush(session)
    detach()
    await withSql(url, (sql) => sql.unsafe(`UPDATE "${schema}".events SET line = '{"type":"turn/end","seq":6,"secret":' WHERE session_id = 'corrupt' AND seq = 6`))
    const error = await backend.load(session.id).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'CORRUPT_SESSION', seq: 6 })
    expect(String((error as Error).message)).not.toContain('secret')
    await expect(backend.load(session.id)).rejects.toMatchObject({ code: 'CORRUPT_SESSION' })
    expect(await storedLines(url, schema, 'corrupt')).toHaveLength(7)
  })

  it('a stored log with a gap is CORRUPT_SESSION naming the missing seq, and loads nothing', async ({ skip }) => {
    const { url, schema, ctx, backend } = await setup(skip)
    const session = ctx.sessions.prepare(SessionId('gap'))
    const detach = ctx.sessions.enter(session)
    trickyTurn(session, 1)
    trickyTurn(session, 2)
    await ctx.sessions.flush(session)
    detach()
    await withSql(url, (sql) => sql.unsafe(`DELETE FROM "${schema}".events WHERE session_id = 'gap' AND seq = 9`))
    const error = await backend.load(session.id).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'CORRUPT_SESSION', seq: 9 })
    expect(String((error as Error).message)).toContain('event 9 is missing (the next stored event is seq 10)')
    expect(await storedLines(url, schema, 'gap')).toHaveLength(12)
  })

  it('a fresh session under a stored id fails its first write with SESSION_EXISTS and stores nothing', async ({ skip }) => {
    const { url, schema, ctx } = await setup(skip)
    const first = ctx.sessions.prepare(SessionId('taken'))
    const detach = ctx.sessions.enter(first)
    trickyTurn(first, 1)
    await ctx.sessions.flush(first)
    detach()
    const other = await mount(url, schema)
    cleanups.push(() => other.fiber.dispose())
    const again = other.ctx.sessions.prepare(SessionId('taken'))
    other.ctx.sessions.enter(again)
    await expect(other.ctx.sessions.flush(again)).rejects.toMatchObject({ code: 'FLUSH_FAILED', cause: { code: 'SESSION_EXISTS' } })
    expect(await storedLines(url, schema, 'taken')).toHaveLength(7)
  })

  it('a takeover fences the former holder at once: its next write is refused with LEASE_LOST and nothing of it is stored', async ({ skip }) => {
    const { url, schema, backend } = await setup(skip)
    const logs = new Context()
    await logs.plugin(Sessions)
    const session = logs.sessions.prepare(SessionId('fenced'))
    trickyTurn(session, 1)
    await backend.append(session.id, session.events)
    await backend.flush(session.id)
    // Another process takes the lease over (as after its expiry).
    await withSql(url, (sql) => sql.unsafe(`UPDATE "${schema}".leases SET holder = 'other', epoch = epoch + 1`))
    session.append('turn/start', { turn: 2, trigger: { kind: 'prompt' } })
    await backend.append(session.id, session.events.slice(7))
    await expect(backend.flush(session.id)).rejects.toMatchObject({ code: 'LEASE_LOST', id: 'fenced' })
    expect(await storedLines(url, schema, 'fenced')).toHaveLength(7)
    // Sticky until released.
    await expect(backend.flush(session.id)).rejects.toMatchObject({ code: 'LEASE_LOST' })
  })
})

describe('watching (R-PG-3)', () => {
  it('a process without the lease sees every committed event in order, live, each once', async ({ skip }) => {
    const { url, schema, ctx } = await setup(skip)
    const watcher = await mount(url, schema)
    cleanups.push(() => watcher.fiber.dispose())
    const session = ctx.sessions.prepare(SessionId('watched'))
    ctx.sessions.enter(session)
    trickyTurn(session, 1)
    await ctx.sessions.flush(session)
    const abort = new AbortController()
    const seen: AnySessionEvent[] = []
    const reached: Array<{ length: number; resolve: () => void }> = []
    // Already reached when the watcher's notification was read before the writer's flush resolved.
    const seenUpTo = (length: number) => (seen.length >= length ? Promise.resolve() : new Promise<void>((resolve) => reached.push({ length, resolve })))
    const following = (async () => {
      for await (const event of watcher.backend.watch(session.id, { signal: abort.signal })) {
        seen.push(event)
        for (const waiter of reached) if (seen.length === waiter.length) waiter.resolve()
        if (seen.length === 19) abort.abort()
      }
    })()
    // Each later turn is committed only after the watcher has seen everything before it: it is
    // delivered by the notification of its own transaction.
    await seenUpTo(7)
    trickyTurn(session, 2)
    await ctx.sessions.flush(session)
    await seenUpTo(13)
    trickyTurn(session, 3)
    await ctx.sessions.flush(session)
    await following
    expect(seen).toEqual(JSON.parse(JSON.stringify([...session.events])))
  })
})

describe('watching: a fromSeq it cannot follow', () => {
  it('is refused with INVALID_ARGUMENT, instead of a watch that never yields', async ({ skip }) => {
    const { ctx, backend } = await setup(skip)
    const session = ctx.sessions.prepare(SessionId('watched'))
    ctx.sessions.enter(session)
    trickyTurn(session, 1)
    await ctx.sessions.flush(session)
    const outcomes: unknown[] = []
    // -1 (a "last seen" passed as the next), 1.5, and "2" (a query-string value): each read rows but matched none.
    for (const fromSeq of [-1, 1.5, '2' as unknown as number]) {
      const abort = new AbortController()
      const first = backend.watch(session.id, { fromSeq, signal: abort.signal }).next()
      // Refused at once; a watch that took it would only end here, having yielded nothing (its rows never match).
      abort.abort()
      outcomes.push(await first.then((step) => ({ step }), (error: { code?: unknown; message?: unknown }) => ({ code: error.code, message: error.message })))
    }
    expect(outcomes).toEqual(
      ['-1', '1.5', '"2"'].map((shown) => ({
        code: 'INVALID_ARGUMENT',
        message: `watch() of session "watched": fromSeq ${shown} is not a seq; give a whole number from 0 (the first event to deliver).`,
      })),
    )
  })
})

describe('shutdown', () => {
  it('disposing the plugin ends a watch that waits for events', async ({ skip }) => {
    const url = pgUrl(skip)
    const schema = freshSchema()
    cleanups.push(() => dropSchema(url, schema))
    const watcher = await mount(url, schema)
    const seen: AnySessionEvent[] = []
    const listening = (async () => {
      for await (const event of watcher.backend.watch(SessionId('nobody-writes'))) seen.push(event)
      return 'ended'
    })()
    await watcher.backend.list()
    await watcher.fiber.dispose()
    expect(await listening).toBe('ended')
    expect(seen).toEqual([])
  })
})
