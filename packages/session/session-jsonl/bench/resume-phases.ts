/**
 * The phases of the resume bench (see `resume.ts`), each run in its own
 * process from a bundle of this file; each prints one JSON report line.
 *
 *   node phases.mjs write <directory> <events>   a live session through ctx.sessions + JSONL, flush per turn
 *   node phases.mjs write-step <directory> <events>  the same, also flushing before each step's model output (the loop's
 *                                                 `durability: 'step'`: what a request derives from is durable before it leaves)
 *   node phases.mjs step-flush <directory|-> <steps>  short tool steps (6 events each), one flush per step: the cost of one
 *                                                 grouped write + fsync as a request sees it
 *   node phases.mjs flush-noop <directory|-> <calls>  ctx.sessions.flush with nothing pending, <calls> times
 *   node phases.mjs write-memory - <events>      the same without persistence (the baseline)
 *   node phases.mjs stream <directory|-> <chunks>  one step streaming <chunks> assistant/chunk events, one flush at the end
 *   node phases.mjs load <directory>             ctx.sessionPersistence.load alone
 *   node phases.mjs resume <directory>           load, then ctx.sessions.prepare({ events }): a whole resume
 */
import { statSync } from 'node:fs'
import { Context } from 'cordis'
import type { CallId, MessageId } from '@deepseek-ai/dsh-llm'
import Sessions, { type SessionEventMap, type SessionEventType, type SessionId } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '../src/index.ts'

const ID = 'bench-resume' as SessionId

export interface PhaseReport {
  phase: 'write' | 'write-step' | 'write-memory' | 'load' | 'resume' | 'stream' | 'step-flush' | 'flush-noop'
  events: number
  ms: number
  /** `resume`: the part of `ms` spent in `load`. */
  loadMs?: number
  /**
   * CPU time (user + system, all threads) over the same span as `ms`. On a
   * busy machine wall time mostly measures the wait for a core; CPU time is
   * what the work costs.
   */
  cpuMs: number
  maxRssMb: number
  /** RSS before the phase's work (modules loaded, backend mounted). */
  baselineRssMb?: number
  flushes?: number
  bytes?: number
  warnings?: number
  repairs?: number
}

const WORDS = (
  'the of and to in is that for it as with was on be by this are or at from an which but not have has ' +
  'function return value type string number object array error result session event turn step tool call ' +
  'model request response stream chunk message content block text reasoning index data file line write ' +
  'read load flush sync crash repair lock process directory version format budget memory time seq'
).split(' ')

/** Generates the bench session turn by turn, so the writer process never holds the whole log. */
function* turns(total: number): Generator<Array<[SessionEventType, unknown]>> {
  let produced = 1 // session/meta
  for (let turn = 1; produced < total; turn++) {
    const out: Array<[SessionEventType, unknown]> = []
    const seqBase = produced
    const push = <K extends SessionEventType>(type: K, data: SessionEventMap[K]) => out.push([type, data])
    push('turn/start', { turn, trigger: { kind: 'prompt' } })
    push('step/start', { turn, step: 1 })
    push('user/message', {
      message: { id: `u${turn}` as MessageId, role: 'user', content: [{ type: 'text', text: `Question ${turn}?` }], source: { kind: 'user' } },
    })
    if (turn === 1) {
      push('request/header', { provider: 'scripted', model: 'bench', system: 'You are a benchmark.', tools: [], reason: 'initial' })
    }
    // Step 1: 200 chunks, then a tool call.
    const callId = `call_${turn}` as CallId
    const step1: number[] = []
    let text1 = ''
    for (let i = 0; i < 200; i++) {
      const word = WORDS[(turn * 7 + i) % WORDS.length]! + ' '
      step1.push(seqBase + out.length)
      text1 += word
      push('assistant/chunk', { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: word } })
    }
    push('assistant/message', {
      turn,
      step: 1,
      message: {
        id: `a${turn}-1` as MessageId,
        role: 'assistant',
        content: [
          { type: 'text', text: text1 },
          { type: 'tool-call', id: callId, name: 'read_file', arguments: '{"path":"README.md"}' },
        ],
        source: { kind: 'model', provider: 'scripted', model: 'bench' },
      },
      chunkSeqs: step1,
      finishReason: { kind: 'tool-calls' },
    })
    push('tool/call', { turn, step: 1, callId, name: 'read_file', arguments: '{"path":"README.md"}' })
    push('tool/result', {
      turn,
      step: 1,
      message: {
        id: `r${turn}` as MessageId,
        role: 'user',
        content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: '# README\nA small file.' }] }],
        source: { kind: 'tool', callId },
      },
    })
    push('step/end', { turn, step: 1 })
    // Step 2: up to 800 chunks of answer.
    push('step/start', { turn, step: 2 })
    const room = Math.max(0, Math.min(800, total - produced - out.length - 3))
    const step2: number[] = []
    let text2 = ''
    for (let i = 0; i < room; i++) {
      const word = WORDS[(turn * 13 + i * 5) % WORDS.length]! + ' '
      step2.push(seqBase + out.length)
      text2 += word
      push('assistant/chunk', { turn, step: 2, chunk: { type: 'text-delta', index: 0, text: word } })
    }
    push('assistant/message', {
      turn,
      step: 2,
      message: { id: `a${turn}-2` as MessageId, role: 'assistant', content: [{ type: 'text', text: text2 }], source: { kind: 'model', provider: 'scripted', model: 'bench' } },
      chunkSeqs: step2,
      finishReason: { kind: 'stop' },
    })
    push('step/end', { turn, step: 2 })
    push('turn/end', { turn, reason: { kind: 'completed' } })
    produced += out.length
    yield out
  }
}

function cpuSince(start: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(start)
  return (user + system) / 1000
}

async function mount(directory: string | undefined) {
  const root = new Context()
  await root.plugin(Sessions)
  const fiber = directory === undefined ? undefined : root.plugin(JsonlSessionPersistence, { directory, flushIntervalMs: 100 })
  await fiber
  return { root, backend: root.get('sessionPersistence') as JsonlSessionPersistence | undefined, dispose: () => fiber?.dispose() }
}

/**
 * Appends the bench session to a live session, one event at a time as the
 * loop does, flushing at every turn end; with `perStep`, also before the first
 * chunk of each step (after the step's input and header are logged), where the
 * loop flushes with `durability: 'step'`.
 */
async function writePhase(directory: string | undefined, total: number, perStep = false): Promise<PhaseReport> {
  const { root, backend, dispose } = await mount(directory)
  const cpu = process.cpuUsage()
  const started = performance.now()
  const session = root.sessions.create(ID, { cwd: '/bench' })
  let flushes = 0
  for (const turn of turns(total)) {
    let previous: SessionEventType | undefined
    for (const [type, data] of turn) {
      if (perStep && type === 'assistant/chunk' && previous !== 'assistant/chunk') {
        await root.sessions.flush(session)
        flushes++
      }
      session.append(type, data as never)
      previous = type
    }
    await root.sessions.flush(session)
    flushes++
  }
  const ms = performance.now() - started
  const cpuMs = cpuSince(cpu)
  await dispose()
  return {
    phase: directory === undefined ? 'write-memory' : perStep ? 'write-step' : 'write',
    events: session.events.length,
    ms,
    cpuMs,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    flushes,
    ...(backend ? { bytes: statSync(backend.fileOf(ID)).size } : {}),
  }
}

/**
 * Streaming alone: one open step receiving `chunks` chunks as fast as the log
 * accepts them, in bursts of 64 with the event loop turning in between (as
 * chunks from a network stream do); one flush at the end.
 */
async function streamPhase(directory: string | undefined, chunks: number): Promise<PhaseReport> {
  const { root, dispose } = await mount(directory)
  const session = root.sessions.create(ID)
  session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
  session.append('step/start', { turn: 1, step: 1 })
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let i = 0; i < chunks; i++) {
    session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: WORDS[i % WORDS.length]! + ' ' } })
    // Chunks arrive from a network stream in bursts; between bursts the event loop runs (and the writer with it).
    if (i % 64 === 63) await new Promise((resolve) => setImmediate(resolve))
  }
  await root.sessions.flush(session)
  const ms = performance.now() - started
  const cpuMs = cpuSince(cpu)
  await dispose()
  return { phase: 'stream', events: chunks, ms, cpuMs, maxRssMb: process.resourceUsage().maxRSS / 1024, flushes: 1 }
}

/**
 * The per-step checkpoint alone: `steps` short tool steps (step/start, a
 * request/header, the assistant message with one call, tool/call,
 * tool/result, step/end), each followed by one `ctx.sessions.flush` with
 * those six events pending: one write and one fsync each. `ms / flushes` is
 * what the checkpoint adds to a step.
 */
async function stepFlushPhase(directory: string | undefined, steps: number): Promise<PhaseReport> {
  const { root, dispose } = await mount(directory)
  const session = root.sessions.create(ID)
  session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
  await root.sessions.flush(session)
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let step = 1; step <= steps; step++) {
    const callId = `call_${step}` as CallId
    session.append('step/start', { turn: 1, step })
    session.append('request/header', { provider: 'scripted', model: 'bench', system: 'You are a benchmark.', tools: [], reason: step === 1 ? 'initial' : 'change' })
    session.append('assistant/message', {
      turn: 1,
      step,
      message: {
        id: `a${step}` as MessageId,
        role: 'assistant',
        content: [{ type: 'tool-call', id: callId, name: 'read_file', arguments: '{"path":"README.md"}' }],
        source: { kind: 'model', provider: 'scripted', model: 'bench' },
      },
      chunkSeqs: [],
      finishReason: { kind: 'tool-calls' },
    })
    session.append('tool/call', { turn: 1, step, callId, name: 'read_file', arguments: '{"path":"README.md"}' })
    session.append('tool/result', {
      turn: 1,
      step,
      message: {
        id: `r${step}` as MessageId,
        role: 'user',
        content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: '# README' }] }],
        source: { kind: 'tool', callId },
      },
    })
    session.append('step/end', { turn: 1, step })
    await root.sessions.flush(session)
  }
  const ms = performance.now() - started
  const cpuMs = cpuSince(cpu)
  await dispose()
  return { phase: 'step-flush', events: steps * 6, ms, cpuMs, maxRssMb: process.resourceUsage().maxRSS / 1024, flushes: steps }
}

/** `ctx.sessions.flush` with nothing pending, `calls` times in a row (after one flush that wrote everything). */
async function flushNoopPhase(directory: string | undefined, calls: number): Promise<PhaseReport> {
  const { root, dispose } = await mount(directory)
  const session = root.sessions.create(ID)
  session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
  await root.sessions.flush(session)
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let i = 0; i < calls; i++) await root.sessions.flush(session)
  const ms = performance.now() - started
  const cpuMs = cpuSince(cpu)
  await dispose()
  return { phase: 'flush-noop', events: 0, ms, cpuMs, maxRssMb: process.resourceUsage().maxRSS / 1024, flushes: calls }
}

async function loadPhase(directory: string, prepare: boolean): Promise<PhaseReport> {
  const { root, backend, dispose } = await mount(directory)
  const baselineRssMb = process.memoryUsage().rss / 1e6
  const cpu = process.cpuUsage()
  const started = performance.now()
  const loaded = await backend!.load(ID)
  const loadMs = performance.now() - started
  const session = prepare ? root.sessions.prepare(ID, { events: loaded.events }) : undefined
  const ms = performance.now() - started
  const cpuMs = cpuSince(cpu)
  const report: PhaseReport = {
    phase: prepare ? 'resume' : 'load',
    events: session?.events.length ?? loaded.events.length,
    ms,
    cpuMs,
    ...(prepare ? { loadMs } : {}),
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    baselineRssMb,
    warnings: loaded.warnings.length,
    repairs: loaded.repairs.length,
  }
  await dispose()
  return report
}

const [mode, directory, events] = process.argv.slice(2)
const optional = directory === '-' ? undefined : directory
const report =
  mode === 'write' || mode === 'write-memory' || mode === 'write-step'
    ? await writePhase(mode === 'write-memory' ? undefined : directory, Number(events), mode === 'write-step')
    : mode === 'step-flush'
      ? await stepFlushPhase(optional, Number(events))
      : mode === 'flush-noop'
        ? await flushNoopPhase(optional, Number(events))
        : mode === 'stream'
          ? await streamPhase(optional, Number(events))
          : await loadPhase(directory!, mode === 'resume')
process.stdout.write(JSON.stringify(report) + '\n')
