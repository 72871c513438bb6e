/**
 * The child processes of scenario 10.
 *
 *   … session-postgres-child.ts load <schema> <id>   resume <id> here; print the figures
 *   … session-postgres-child.ts hold <schema> <id>   hold a live session <id>, flushing chunks
 *                                                    forever; prints "flushed" once
 *
 * The server is `DSH_PG_URL` from the environment (never an argument: it may hold a password,
 * and a failed child's arguments are printed).
 */
import { Context } from 'cordis'
import Sessions, { SessionId } from '@deepseek-ai/dsh-session'
import Postgres from '@deepseek-ai/dsh-session-postgres'
import { RESULT_PREFIX, assertSourceResolution } from '../lib/child-process.ts'

const [mode, schema, rawId] = process.argv.slice(2) as [string, string, string]
const url = process.env.DSH_PG_URL!
assertSourceResolution()
const id = SessionId(rawId)
const root = new Context()
await root.plugin(Sessions)
const fiber = root.plugin(Postgres, { url, schema, flushIntervalMs: 60_000 })
await fiber
const backend = root.sessionPersistence

if (mode === 'load') {
  await backend.list() // the connection and migration check, outside the measured load
  const baselineRssMb = process.memoryUsage().rss / 1048576
  const t0 = performance.now()
  const loaded = await backend.load(id)
  const session = root.sessions.prepare(id, { events: loaded.events })
  const detach = root.sessions.enter(session)
  const loadMs = performance.now() - t0
  const peakRssMb = process.resourceUsage().maxRSS / 1024
  const events = session.events.length
  detach()
  await fiber.dispose()
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify({ events, loadMs, peakRssMb, baselineRssMb })}\n`)
  process.exit(0)
} else {
  const session = root.sessions.create(id, { cwd: '/bench' })
  session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
  session.append('step/start', { turn: 1, step: 1 })
  let told = false
  for (;;) {
    session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } })
    await root.sessions.flush(session)
    if (!told) {
      process.stdout.write('flushed\n')
      told = true
    }
  }
}
