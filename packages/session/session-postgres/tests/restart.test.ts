import { afterEach, expect, it } from 'vitest'
import { SessionId } from '@deepseek-ai/dsh-session'
import { createUserMessage } from '@deepseek-ai/dsh-llm'
import { mount, withSql } from './helpers'
import { PrivateCluster } from './private-cluster'

const cleanups: Array<() => Promise<void> | void> = []
// The cleanup stops a real PostgreSQL server (`pg_ctl stop -w`): a ceiling for a loaded machine.
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
}, 300_000)

// initdb, three server starts or stops and a recovery run as real processes: about 10 s on an
// idle machine, minutes on a loaded one (each pg_ctl waits up to its own -t ceiling), so the
// test's ceiling covers them all.
it('the database restarted mid-session: the flush fails with a clear error, nothing is half-written, and the session resumes once the server is back', { timeout: 600_000 }, async ({ skip }) => {
  const binaries = PrivateCluster.binaries()
  if ('reason' in binaries) {
    if (process.env.DSH_PG_REQUIRED === '1') throw new Error(`DSH_PG_REQUIRED=1 but ${binaries.reason}`)
    skip(true, binaries.reason)
    return
  }
  const cluster = await PrivateCluster.start(binaries.bin)
  cleanups.push(() => cluster.destroy())
  const { ctx, backend, fiber } = await mount(cluster.url, 'dsh')
  cleanups.push(() => fiber.dispose())
  const id = SessionId('restarted')
  const session = ctx.sessions.prepare(id, { meta: { cwd: '/work' } })
  const detach = ctx.sessions.enter(session)
  session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
  session.append('user/message', { message: createUserMessage('before the restart') })
  await ctx.sessions.flush(session)
  const durable = session.events.length

  cluster.stopServer()
  session.append('step/start', { turn: 1, step: 1 })
  session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'lost' } })
  const failure = await ctx.sessions.flush(session).catch((error: unknown) => error)
  expect(failure).toMatchObject({ code: 'FLUSH_FAILED', cause: { code: 'DATABASE_FAILED', id: 'restarted' } })
  const message = (failure as { cause: Error }).cause.message
  // The server went away under the client: a query sent on the dropped connection may have been committed, so the
  // message may not call the flush's events lost (the count below shows what is); a new connection refused stored nothing.
  expect(message).toMatch(
    /^Writing session "restarted" failed: (the connection to the server was lost \((CONNECTION_\w+|EPIPE|ECONNRESET)\)\. The server did not answer, so the events of that flush may or may not be stored .+; load the session again to see what it holds and continue it\.|the server refused the connection \(ECONNREFUSED: [^)]*\)\. Nothing after the last successful flush is stored; load the session again to continue it\.)$/,
  )
  expect(message).not.toContain('dsh@') // never the connection string
  // Sticky: the writer never reports the lost events as stored.
  await expect(ctx.sessions.flush(session)).rejects.toMatchObject({ code: 'FLUSH_FAILED' })
  detach()

  cluster.startServer()
  const stored = await withSql(cluster.url, (sql) => sql.unsafe(`SELECT count(*)::int AS n FROM dsh.events WHERE session_id = 'restarted'`))
  expect(stored[0]!.n).toBe(durable)
  // The process recovers: the session loads (repaired: its open turn closed), goes live and writes again.
  const loaded = await backend.load(id)
  expect(loaded.events.map((event) => event.type)).toEqual(['session/meta', 'turn/start', 'user/message', 'turn/end'])
  const resumed = ctx.sessions.prepare(id, { events: loaded.events })
  ctx.sessions.enter(resumed)
  resumed.append('turn/start', { turn: 2, trigger: { kind: 'prompt' } })
  await ctx.sessions.flush(resumed)
  const after = await withSql(cluster.url, (sql) => sql.unsafe(`SELECT count(*)::int AS n FROM dsh.events WHERE session_id = 'restarted'`))
  expect(after[0]!.n).toBe(5)
})
