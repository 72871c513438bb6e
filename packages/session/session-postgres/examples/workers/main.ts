/**
 * The multi-worker example (R-PG-4), run from the repository root:
 *
 *   DSH_PG_URL=postgres://… node --conditions=dsh-source --import tsx \
 *     packages/session/session-postgres/examples/workers/main.ts --workers 3 --sessions 5 --prompts 20
 *
 * starts N worker processes (worker.ts) on one database schema, queues the
 * prompts round-robin over the sessions, waits until every prompt is settled
 * and prints the table of prompts (state, worker, outcome). Add
 * `--kill-one` to SIGKILL a worker mid-turn (its prompt says "hang"): another
 * worker settles that prompt as `interrupted` once the dead worker's leases
 * expire. `--schema <name>` picks the schema (default `dsh_workers`).
 *
 *   … main.ts --watch <session>
 *
 * follows one session live from this process, without its lease: every
 * committed event, as its transaction commits (LISTEN/NOTIFY, then reads by
 * seq), until Ctrl-C.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Context } from 'cordis'
import { SessionId } from '@deepseek-ai/dsh-session'
import PostgresSessionPersistence from '../../src/index.ts'
import { PromptQueue } from './queue.ts'

const { values } = parseArgs({
  options: {
    workers: { type: 'string', default: '3' },
    sessions: { type: 'string', default: '5' },
    prompts: { type: 'string', default: '20' },
    schema: { type: 'string', default: 'dsh_workers' },
    watch: { type: 'string' },
    'kill-one': { type: 'boolean', default: false },
  },
})
const url = process.env.DSH_PG_URL
if (!url) {
  process.stderr.write('Set DSH_PG_URL to a PostgreSQL connection string (postgres://user:password@host:5432/database).\n')
  process.exit(2)
}
const schema = values.schema!

if (values.watch !== undefined) {
  const app = new Context()
  const fiber = app.plugin(PostgresSessionPersistence, { url, schema })
  await fiber
  const backend = app.sessionPersistence as PostgresSessionPersistence
  const stop = new AbortController()
  process.on('SIGINT', () => stop.abort())
  for await (const event of backend.watch(SessionId(values.watch), { signal: stop.signal })) {
    const data = event.data as { chunk?: { text?: string }; turn?: number }
    const detail = data.chunk?.text !== undefined ? JSON.stringify(data.chunk.text) : data.turn !== undefined ? `turn ${data.turn}` : ''
    process.stdout.write(`${String(event.seq).padStart(6)}  ${event.type}  ${detail}\n`)
  }
  await fiber.dispose()
  process.exit(0)
}

const queue = new PromptQueue(url, schema)
await queue.migrate()
const sessions = Number(values.sessions)
const prompts = Number(values.prompts)
for (let i = 0; i < prompts; i++) await queue.enqueue(`session-${i % sessions}`, `prompt ${i}`)
if (values['kill-one']) await queue.enqueue('session-hang', 'please hang')

const worker = fileURLToPath(new URL('./worker.ts', import.meta.url))
/** The export condition that resolves workspace packages to their sources. */
const CONDITIONS = ['--conditions=dsh-source']
const children: ChildProcess[] = []
let killed = false
for (let i = 0; i < Number(values.workers); i++) {
  const child = spawn(process.execPath, [...CONDITIONS, '--import', 'tsx', worker, schema, `worker-${i}`], { stdio: ['ignore', 'pipe', 'inherit'] })
  children.push(child)
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    for (const line of text.split('\n').filter(Boolean)) {
      process.stdout.write(line + '\n')
      if (values['kill-one'] && !killed && line.includes('"in-tool"')) {
        killed = true
        child.kill('SIGKILL')
        process.stdout.write(`killed worker-${i} mid-turn\n`)
      }
    }
  })
}

for (;;) {
  const rows = await queue.rows()
  if (rows.every((row) => row.state !== 'queued' && row.state !== 'running')) {
    console.table(rows.map(({ id, session_id, state, worker: by, outcome }) => ({ id, session: session_id, state, worker: by, outcome })))
    break
  }
  await new Promise((resolve) => setTimeout(resolve, 250))
}
for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
await Promise.all(children.map((child) => (child.exitCode !== null || child.signalCode !== null ? undefined : new Promise((resolve) => child.once('exit', resolve)))))
await queue.close()
