/**
 * Scenario 10, dsh-session-postgres (issue 23): on the server `DSH_PG_URL`
 * names, in a schema made for the run and dropped after it,
 * - the append rate of one session through `ctx.sessionPersistence`,
 *   `perTransaction` events per flush, so each flush is one committed
 *   transaction of that many rows, two ways: *streamed* (budget ≥ 50,000
 *   events/s), where the next batch is appended (encoded) while the previous
 *   flush commits and every flush is awaited in order, as a live session's
 *   events keep arriving while its write-behind commits; and *serial*
 *   (append, await the flush, next), a caller that waits for each commit
 *   before producing more, the slowest shape (no budget). Both follow an
 *   untimed warm-up append of `warmupEvents` (the same loop as the serial
 *   one, on its own session), so neither pays the process's and the
 *   connections' first writes (JIT, a fresh server backend faulting in the
 *   shared buffers it touches) and the order of the two does not favour
 *   the second;
 * - the resume of a `resumeEvents`-event session (200-chunk answer steps)
 *   in a fresh process: load (lease, streamed read, repair check) plus
 *   `ctx.sessions.prepare` and publication (budget ≤ 10 s and ≤ 400 MB peak
 *   RSS);
 * - the lease takeover after a kill: a child holds a live session and
 *   streams flushes into it; it is SIGKILLed and the time until another
 *   process's `load` succeeds is measured (TTL 3 s; budget ≤ 5 s).
 *
 * Without `DSH_PG_URL` (or with a server that does not answer) the run is
 * skipped (`ScenarioSkipped`) with the reason and how to provide a server.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { childFlags, runChild } from '../lib/child-process.ts'
import type { AnySessionEvent, SessionId, SessionPersistence } from '@deepseek-ai/dsh-session'
import { ScenarioSkipped, defineScenario, type Metrics } from '../lib/scenario.ts'

interface Params {
  appendEvents: number
  warmupEvents: number
  perTransaction: number
  resumeEvents: number
}

const CHILD = fileURLToPath(new URL('./session-postgres-child.ts', import.meta.url))

/** How to get a server, for the reason of a skipped run. */
const HOW = 'point it at a PostgreSQL database (`source scripts/ci/postgres.sh` starts this machine\'s cluster and sets it)'

async function sessionPostgres(_subject: string, params: Params): Promise<Metrics> {
  const url = process.env.DSH_PG_URL
  if (!url) throw new ScenarioSkipped(`DSH_PG_URL is not set: ${HOW}`)
  const { Context } = await import('cordis')
  const { default: Sessions, SessionId } = await import('@deepseek-ai/dsh-session')
  const { default: Postgres } = await import('@deepseek-ai/dsh-session-postgres')
  const { default: postgres } = await import('postgres')
  const probe = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} })
  try {
    await probe`SELECT 1`
  } catch (error) {
    await probe.end({ timeout: 1 }).catch(() => {})
    // The code only (ECONNREFUSED, 28P01): a message could quote the URL, which holds a password.
    throw new ScenarioSkipped(`the PostgreSQL server named by DSH_PG_URL did not answer (${(error as { code?: string }).code ?? 'error'}): start it, or ${HOW}`)
  }
  const schema = `bench_${randomBytes(5).toString('hex')}`
  const root = new Context()
  await root.plugin(Sessions)
  const fiber = root.plugin(Postgres, { url, schema, flushIntervalMs: 60_000, batchSize: 1_000_000 })
  await fiber
  const backend = root.sessionPersistence
  const { buildLog } = await import('./session-postgres-log.ts')
  try {
    // 1. Append rate: the logs are built first (in memory), then appended and flushed in transactions.
    const warmupLog = buildLog(root.sessions.prepare(SessionId('bench-append-warmup')), params.warmupEvents).events
    await appendSerially(backend, SessionId('bench-append-warmup'), warmupLog, params.perTransaction)
    const serialLog = buildLog(root.sessions.prepare(SessionId('bench-append-serial')), params.appendEvents).events
    const streamedLog = buildLog(root.sessions.prepare(SessionId('bench-append')), params.appendEvents).events
    const serial = await appendSerially(backend, SessionId('bench-append-serial'), serialLog, params.perTransaction)
    const streamed = await appendStreamed(backend, SessionId('bench-append'), streamedLog, params.perTransaction)

    // 2. Resume: a long session written the same way, then loaded in a fresh process.
    const big = buildLog(root.sessions.prepare(SessionId('bench-resume')), params.resumeEvents)
    const bigEvents = big.events
    for (let at = 0; at < bigEvents.length; at += 10_000) {
      await backend.append(big.id, bigEvents.slice(at, at + 10_000))
      await backend.flush(big.id)
    }
    await (backend as unknown as { release(id: string): Promise<void> }).release(big.id)
    const { result } = await runChild(CHILD, ['load', schema, big.id])
    const loaded = result as Metrics
    if (loaded.events !== bigEvents.length) throw new Error(`resumed ${loaded.events} events, wrote ${bigEvents.length}`)

    // 3. Takeover after a kill.
    const takeoverMs = await takeover(schema, backend)
    return {
      appendEventsPerSecond: streamedLog.length / (streamed.ms / 1000),
      appendCpuUsPerEvent: streamed.cpuUs / streamedLog.length,
      appendSerialEventsPerSecond: serialLog.length / (serial.ms / 1000),
      appendSerialCpuUsPerEvent: serial.cpuUs / serialLog.length,
      perTransaction: params.perTransaction,
      resumeEvents: loaded.events!,
      resumeMs: loaded.loadMs!,
      peakRssMb: loaded.peakRssMb!,
      baselineRssMb: loaded.baselineRssMb!,
      takeoverMs,
    }
  } finally {
    await fiber.dispose()
    await probe.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {})
    await probe.end({ timeout: 5 })
  }
}

interface Timed {
  ms: number
  /** This process's CPU time (user + system), µs. */
  cpuUs: number
}

async function timed(body: () => Promise<void>): Promise<Timed> {
  const cpu = process.cpuUsage()
  const t0 = performance.now()
  await body()
  const ms = performance.now() - t0
  const used = process.cpuUsage(cpu)
  return { ms, cpuUs: used.user + used.system }
}

/** Append a batch, await its flush (one committed transaction), next: nothing overlaps. */
function appendSerially(backend: SessionPersistence, id: SessionId, events: readonly AnySessionEvent[], per: number): Promise<Timed> {
  return timed(async () => {
    for (let at = 0; at < events.length; at += per) {
      await backend.append(id, events.slice(at, at + per))
      await backend.flush(id)
    }
  })
}

/**
 * Append batch n + 1 while batch n's flush commits, then await that flush:
 * still one transaction of `per` rows per flush, each flush awaited in order
 * (the write-behind takes a batch whole and writes the next after the
 * previous committed), but the encoding of a batch overlaps the database's
 * work on the one before.
 */
function appendStreamed(backend: SessionPersistence, id: SessionId, events: readonly AnySessionEvent[], per: number): Promise<Timed> {
  return timed(async () => {
    let previous: Promise<void> | undefined
    for (let at = 0; at < events.length; at += per) {
      await backend.append(id, events.slice(at, at + per))
      const flushed = backend.flush(id)
      // Handled now, awaited in order below: a failure is seen once, as the bench's failure.
      flushed.catch(() => {})
      await previous
      previous = flushed
    }
    await previous
  })
}

/** Starts a holder child, waits for its first flushes, SIGKILLs it, and times until a `load` here succeeds. */
async function takeover(schema: string, backend: { load(id: never): Promise<unknown> }): Promise<number> {
  const child = spawn(process.execPath, [...childFlags(), CHILD, 'hold', schema, 'bench-takeover'], { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise<void>((resolve, reject) => {
    let seen = ''
    child.stdout.setEncoding('utf8').on('data', (data: string) => {
      seen += data
      if (seen.includes('flushed\n')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`the holder exited (${code}) before holding the session`)))
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const t0 = performance.now()
  child.kill('SIGKILL')
  await exited
  for (;;) {
    try {
      await backend.load('bench-takeover' as never)
      return performance.now() - t0
    } catch (error) {
      if ((error as { code?: string }).code !== 'SESSION_LOCKED') throw error
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
}

export default defineScenario<Params>({
  id: 'session-postgres',
  title: '10. Sessions on PostgreSQL',
  describe: (p) =>
    `dsh-session-postgres on DSH_PG_URL: append ${p.appendEvents.toLocaleString('en-US')} events to one session, ${p.perTransaction} per transaction, after an untimed warm-up of ${p.warmupEvents.toLocaleString('en-US')}, serially (each flush awaited before the next append), then streamed (the next batch appended while the previous flush commits); resume a ${p.resumeEvents.toLocaleString('en-US')}-event session in a fresh process; lease takeover after SIGKILL of the holder (TTL 3 s)`,
  subjects: ['dsh'],
  metrics: [
    { key: 'perTransaction', label: 'events per transaction', unit: '', digits: 0, compare: false },
    { key: 'appendEventsPerSecond', label: 'append rate, one session, streamed', unit: 'events/s', digits: 0, compare: false, budget: { op: '>=', limit: 50_000, source: 'issue 23' } },
    { key: 'appendCpuUsPerEvent', label: 'streamed: this process\'s CPU per event', unit: 'µs', digits: 1, compare: false },
    { key: 'appendSerialEventsPerSecond', label: 'append rate, serial (each commit awaited)', unit: 'events/s', digits: 0, compare: false },
    { key: 'appendSerialCpuUsPerEvent', label: 'serial: this process\'s CPU per event', unit: 'µs', digits: 1, compare: false },
    { key: 'resumeEvents', label: 'events resumed', unit: '', digits: 0, compare: false },
    { key: 'resumeMs', label: 'resume (load + prepare + publish)', unit: 'ms', digits: 0, compare: false, budget: { op: '<=', limit: 10_000, source: 'issue 23' } },
    { key: 'peakRssMb', label: 'peak RSS of the resuming process', unit: 'MB', digits: 0, compare: false, budget: { op: '<=', limit: 400, source: 'issue 23' } },
    { key: 'baselineRssMb', label: 'RSS before resuming (Node, tsx, modules)', unit: 'MB', digits: 0, compare: false },
    { key: 'takeoverMs', label: 'lease takeover after SIGKILL', unit: 'ms', digits: 0, compare: false, budget: { op: '<=', limit: 5_000, source: 'issue 23' } },
  ],
  params: (mode) =>
    mode === 'full'
      ? { appendEvents: 200_000, warmupEvents: 20_000, perTransaction: 1_000, resumeEvents: 1_000_000 }
      : { appendEvents: 2_000, warmupEvents: 200, perTransaction: 100, resumeEvents: 3_000 },
  runs: (mode) => (mode === 'full' ? 1 : 1),
  run: sessionPostgres,
})
