/**
 * The two phases of the resume bench (see `resume.ts`), each run in its own
 * process from a bundle of this file:
 *
 *   node phases.mjs write <directory> <events>   → one JSON report line
 *   node phases.mjs load <directory>             → one JSON report line
 */
import { statSync } from 'node:fs'
import { Context } from 'cordis'
import type { CallId, MessageId } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent, SessionEventMap, SessionEventType, SessionId } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '../src/index.ts'

const ID = 'bench-resume' as SessionId

export interface PhaseReport {
  phase: 'write' | 'load'
  events: number
  ms: number
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

async function mount(directory: string) {
  const root = new Context()
  const fiber = root.plugin(JsonlSessionPersistence, { directory, flushIntervalMs: 100 })
  await fiber
  return { backend: root.sessionPersistence as JsonlSessionPersistence, dispose: () => fiber.dispose() }
}

async function writePhase(directory: string, total: number): Promise<PhaseReport> {
  const { backend, dispose } = await mount(directory)
  const started = performance.now()
  let seq = 0
  let time = Date.now()
  const event = (type: SessionEventType, data: unknown) => ({ type, seq: seq++, time: time++, data }) as AnySessionEvent
  await backend.append(ID, [event('session/meta', { createdAt: time, version: 1, cwd: '/bench' })])
  let flushes = 0
  for (const turn of turns(total)) {
    // One append per turn: a call through Cordis' service proxy costs microseconds of its own,
    // which the live wiring (a session/event listener) does not pay.
    await backend.append(ID, turn.map(([type, data]) => event(type, data)))
    await backend.flush(ID)
    flushes++
  }
  const ms = performance.now() - started
  await dispose()
  return { phase: 'write', events: seq, ms, maxRssMb: process.resourceUsage().maxRSS / 1024, flushes, bytes: statSync(backend.fileOf(ID)).size }
}

async function loadPhase(directory: string): Promise<PhaseReport> {
  const { backend, dispose } = await mount(directory)
  const baselineRssMb = process.memoryUsage().rss / 1e6
  const started = performance.now()
  const loaded = await backend.load(ID)
  const ms = performance.now() - started
  const report: PhaseReport = {
    phase: 'load',
    events: loaded.events.length,
    ms,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    baselineRssMb,
    warnings: loaded.warnings.length,
    repairs: loaded.repairs.length,
  }
  await dispose()
  return report
}

const [mode, directory, events] = process.argv.slice(2)
const report = mode === 'write' ? await writePhase(directory!, Number(events)) : await loadPhase(directory!)
process.stdout.write(JSON.stringify(report) + '\n')
