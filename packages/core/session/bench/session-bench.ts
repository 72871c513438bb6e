/**
 * Measures dsh-session's hot paths against the budgets of spec §13. From the
 * repository root:
 *
 *   node --conditions=dsh-source --expose-gc --import tsx packages/core/session/bench/session-bench.ts [append|store|resume] [events]
 *
 * Without a mode it runs each mode in its own child process (so peak RSS is
 * per mode) and prints both.
 *
 * - append: `assistant/chunk` appends through `append` (validation, freezing,
 *   commit) for a private session, a live one with no listener, and a live one
 *   with one `session/event` listener. Rates are per second of wall time and
 *   of process CPU time (the CPU figure is steadier on a shared machine).
 * - resume: a log of `events` events (default 1,000,000: turns of 3 steps of
 *   200 chunks each, with tool calls) is serialized as JSON lines, read back
 *   the way a JSON-lines backend does (a `LoadedLog`: chunk lines packed from
 *   their bytes, other lines parsed), and replayed by `prepare({ events })`:
 *   time, peak RSS, and heap retained per event by the resumed session.
 * - store: per-turn store calls on a held `ctx.sessions` reference: `flush`
 *   with no listener and with one listener, and prepare + enter + detach.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Context } from 'cordis'
import Sessions, { LoadedLog, SessionId } from '@deepseek-ai/dsh-session'

const [mode, countArg] = process.argv.slice(2)
const total = Number(countArg ?? 1_000_000)
const gc = (globalThis as { gc?: () => void }).gc

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US')

async function benchAppend(): Promise<void> {
  const root = new Context()
  await root.plugin(Sessions)
  const n = 500_000
  const configurations = [
    { name: 'private session (no publication)', listen: false, live: false },
    { name: 'live session, no listener', listen: false, live: true },
    { name: 'live session, one session/event listener', listen: true, live: true },
    { name: 'live session, one observer (ctx.sessions.observe)', listen: 'observe', live: true },
  ]
  let delivered = 0
  for (const config of configurations) {
    const off =
      config.listen === 'observe'
        ? root.sessions.observe(() => void delivered++)
        : config.listen
          ? root.on('session/event', () => void delivered++)
          : () => true
    const wall: number[] = []
    const cpu: number[] = []
    for (let round = 0; round < 6; round++) {
      const id = SessionId(`append-${config.name}-${round}`)
      const session = config.live ? root.sessions.create(id) : root.sessions.prepare(id)
      session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
      session.append('step/start', { turn: 1, step: 1 })
      const cpu0 = process.cpuUsage()
      const start = process.hrtime.bigint()
      for (let i = 0; i < n; i++) {
        session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'token ' } })
      }
      const seconds = Number(process.hrtime.bigint() - start) / 1e9
      const used = process.cpuUsage(cpu0)
      if (round >= 2) {
        // The first two rounds warm the JIT up.
        wall.push(n / seconds)
        cpu.push(n / ((used.user + used.system) / 1e6))
      }
    }
    off()
    console.log(`append, ${config.name}: ${fmt(median(wall))}/s wall, ${fmt(median(cpu))}/s CPU (median of 4 rounds of ${fmt(n)})`)
  }
  if (delivered === 0) throw new Error('the listener never ran')
}

/** A valid log of about `count` events, as plain objects (what JSON.parse of a log file yields). */
function* syntheticLog(count: number): Generator<object> {
  let seq = 0
  const t0 = 1_700_000_000_000
  const event = (type: string, data: object) => ({ type, seq, time: t0 + seq++, data })
  yield event('session/meta', { cwd: '/repo', createdAt: t0, version: 1 })
  for (let turn = 1; seq < count; turn++) {
    yield event('turn/start', { turn, trigger: { kind: 'prompt' } })
    yield event('user/message', { message: { id: `u${turn}`, role: 'user', content: [{ type: 'text', text: `question ${turn}` }], source: { kind: 'user' } } })
    for (let step = 1; step <= 3; step++) {
      yield event('step/start', { turn, step })
      const chunkSeqs: number[] = []
      for (let i = 0; i < 200; i++) {
        chunkSeqs.push(seq)
        yield event('assistant/chunk', { turn, step, chunk: { type: 'text-delta', index: 0, text: 'token ' } })
      }
      const callId = `call-${turn}-${step}`
      const last = step === 3
      const content = last
        ? [{ type: 'text', text: 'token '.repeat(200) }]
        : [{ type: 'tool-call', id: callId, name: 'read', arguments: '{"path":"src/a.ts"}' }]
      yield event('assistant/message', {
        turn,
        step,
        message: { id: `a${turn}-${step}`, role: 'assistant', content, source: { kind: 'model', provider: 'p', model: 'm' } },
        chunkSeqs,
        usage: { inputTokens: 1000, outputTokens: 200 },
        finishReason: { kind: last ? 'stop' : 'tool-calls' },
      })
      if (!last) {
        yield event('tool/call', { turn, step, callId, name: 'read', arguments: '{"path":"src/a.ts"}' })
        yield event('tool/result', {
          turn,
          step,
          message: { id: `r${turn}-${step}`, role: 'user', content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: 'export const a = 1\n' }] }], source: { kind: 'tool', callId } },
        })
      }
      yield event('step/end', { turn, step })
    }
    yield event('turn/end', { turn, reason: { kind: 'completed' } })
  }
}

/** The log as a JSON-lines backend stores it, in one Buffer (built in pieces, so no large string outlives this call). */
function jsonLines(count: number): Buffer {
  const pieces: Buffer[] = []
  let lines: string[] = []
  for (const event of syntheticLog(count)) {
    lines.push(JSON.stringify(event))
    if (lines.length === 10_000) {
      pieces.push(Buffer.from(lines.join('\n') + '\n'))
      lines = []
    }
  }
  if (lines.length) pieces.push(Buffer.from(lines.join('\n') + '\n'))
  return Buffer.concat(pieces)
}

async function benchResume(): Promise<void> {
  const root = new Context()
  await root.plugin(Sessions)
  if (!gc) throw new Error('run with node --expose-gc')

  const bytes = jsonLines(total)

  gc()
  gc()
  const baseline = process.memoryUsage().heapUsed
  const baselineRss = process.memoryUsage().rss
  // What a backend does: chunk lines packed from their bytes, every other line parsed and pushed.
  const loadStart = process.hrtime.bigint()
  const log = new LoadedLog()
  let fromBytes = 0
  for (let start = 0, end = bytes.indexOf(10); end >= 0; start = end + 1, end = bytes.indexOf(10, start)) {
    if (log.length > 0 && log.pushChunkJson(bytes, start, end)) fromBytes++
    else log.push(JSON.parse(bytes.toString('utf8', start, end)))
  }
  const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6
  const count = log.length

  const prepareStart = process.hrtime.bigint()
  const session = root.sessions.prepare(SessionId('resumed'), { events: log.events })
  const prepareMs = Number(process.hrtime.bigint() - prepareStart) / 1e6
  gc()
  gc()
  const retained = process.memoryUsage().heapUsed - baseline
  const peak = process.resourceUsage().maxRSS / 1024
  console.log(`resume of ${fmt(count)} events (${(bytes.length / 1e6).toFixed(0)} MB as JSONL, held in memory; ${fmt(session.deriveMessages().length)} derived messages):`)
  console.log(`  LoadedLog (a backend's share: ${fmt(fromBytes)} chunk lines packed from their bytes, the rest JSON.parse + push): ${fmt(loadMs)} ms`)
  console.log(`  prepare({ events: log.events }), the trusted replay: ${fmt(prepareMs)} ms (${fmt(count / (prepareMs / 1000))} events/s); load + prepare ${fmt(loadMs + prepareMs)} ms`)
  console.log(`  heap retained by the resumed session: ${(retained / 1e6).toFixed(1)} MB = ${fmt(retained / count)} bytes per event (packed chunks' typed arrays not counted: ${(process.memoryUsage().arrayBuffers / 1e6).toFixed(1)} MB of array buffers, the JSONL text included)`)
  console.log(`  peak RSS of this process: ${fmt(peak)} MB (${fmt(baselineRss / 1048576)} MB before loading: Node, tsx, Cordis and the ${(bytes.length / 1048576).toFixed(0)} MB text)`)
}

async function benchStore(): Promise<void> {
  const root = new Context()
  await root.plugin(Sessions)
  let ctx!: Context
  await root.plugin({ inject: ['sessions'], apply: (c: Context) => void (ctx = c) })
  const sessions = ctx.sessions // held once, as a hot path should: reading ctx.sessions is Cordis' own cost
  const session = sessions.create('store-bench')
  const n = 50_000
  const measure = async (name: string, fn: () => unknown) => {
    const rounds: number[] = []
    for (let round = 0; round < 5; round++) {
      const cpu0 = process.cpuUsage()
      for (let i = 0; i < n; i++) await fn()
      const used = process.cpuUsage(cpu0)
      if (round >= 1) rounds.push((used.user + used.system) / n)
    }
    console.log(`store, ${name}: ${median(rounds).toFixed(2)} µs CPU per call`)
  }
  await measure('flush with no session/flush listener', () => sessions.flush(session))
  const off = root.on('session/flush', async () => {})
  await measure('flush with one session/flush listener', () => sessions.flush(session))
  off()
  let i = 0
  await measure('prepare + enter + detach', () => sessions.enter(sessions.prepare(SessionId(`s${i++}`)))())
  const cpu0 = process.cpuUsage()
  for (let j = 0; j < n; j++) void ctx.sessions
  const used = process.cpuUsage(cpu0)
  console.log(`store, reading ctx.sessions through a context (Cordis): ${((used.user + used.system) / n).toFixed(2)} µs CPU`)
}

if (mode === 'append') await benchAppend()
else if (mode === 'resume') await benchResume()
else if (mode === 'store') await benchStore()
else {
  const self = fileURLToPath(import.meta.url)
  for (const child of ['append', 'store', 'resume']) {
    const result = spawnSync(process.execPath, [...process.execArgv, self, child, String(total)], { stdio: 'inherit' })
    if (result.status !== 0) process.exit(result.status ?? 1)
  }
}
