/**
 * Throughput of the model seam alone (not a test: vitest only runs
 * `*.test.ts`). It measures what the agent loop pays in dsh-llm and the
 * scripted model, without the session log:
 *
 * - `stream`: one call of `--chunks` text deltas (default 100,000) through
 *   `PreparedCall.stream` with a session id and a signal, every chunk pushed
 *   into `createAssembler()`, then `result()`; chunks per second of wall and
 *   of process CPU time, median of `--runs` (default 5);
 * - `call`: `--calls` (default 20,000) 20-delta calls the way the loop makes
 *   them (`prepareCall`, a frozen request marked with `markLoopRequest`,
 *   stream into an assembler, `result()`, `createAssistantMessage`);
 *   microseconds per call, median of `--runs`.
 *
 * It runs inside `AsyncLocalStorage.run`, as the loop does under dsh-agent,
 * so Node 20's promise hooks are on and every promise pays them. Prints one
 * JSON line.
 *
 *   node --conditions=dsh-source --import tsx packages/llm/llm-scripted/tests/perf/stream-throughput.ts [--chunks 100000] [--calls 20000] [--runs 5]
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { parseArgs } from 'node:util'
import { Context } from 'cordis'
import Llm, { createAssembler, createAssistantMessage, createUserMessage, type Message, type SessionId } from '@deepseek-ai/dsh-llm'
import { ScriptedModel, type ScriptReply } from '@deepseek-ai/dsh-llm-scripted'

const { values } = parseArgs({ options: { chunks: { type: 'string' }, calls: { type: 'string' }, runs: { type: 'string' } } })
const chunkCount = Number(values.chunks ?? 100_000)
const callCount = Number(values.calls ?? 20_000)
const runs = Number(values.runs ?? 5)

const ANSWER = 'The change is small: read the file, update the function, run the tests again, then report back to me here.'.split(/(?<= )/)

function deltas(count: number): string[] {
  const out = new Array<string>(count)
  for (let i = 0; i < count; i++) out[i] = `t${i % 1000} `
  return out
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

async function timed(work: () => Promise<void>): Promise<{ wallMs: number; cpuMs: number }> {
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await work()
  const wallMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000 }
}

async function main(): Promise<void> {
  let reply: ScriptReply = { text: ANSWER }
  const root = new Context()
  await root.plugin(Llm)
  root.llm.registerAdapter(['scripted'], new ScriptedModel({ record: false, respond: () => reply }))
  // The loop calls the service behind Cordis' tracing proxy (dsh-agent-loop's `untracedService`).
  const llm = (root.llm as unknown as Record<symbol, typeof root.llm | undefined>)[Symbol.for('cordis.original')] ?? root.llm
  const sessionId = 'bench-session' as SessionId
  const history: Message[] = [createUserMessage('Write a long answer.')]
  const source = { kind: 'model' as const, provider: 'scripted', model: 'bench-model' }
  let turn = 0

  /** One model call the way the loop makes it; returns the chunk count. */
  async function call(): Promise<number> {
    const controller = new AbortController()
    const prepared = await llm.prepareCall({ provider: 'scripted', model: 'bench-model' }, controller.signal)
    turn++
    const request = Object.freeze({ ...prepared.config, system: 'You are a benchmark.', messages: history, sessionId })
    llm.markLoopRequest(request, { sessionId, turn, step: 1, lastSeq: turn * 30, messageCount: history.length })
    const assembler = createAssembler()
    for await (const chunk of prepared.stream({ system: 'You are a benchmark.', messages: history, signal: controller.signal, sessionId })) {
      assembler.push(chunk)
    }
    const result = assembler.result()
    if (result.finishReason.kind !== 'stop') throw new Error(`unexpected finish ${JSON.stringify(result.finishReason)}`)
    createAssistantMessage(result.content, { source })
    return assembler.count
  }

  // Warm-up: a tenth-size stream and a tenth of the calls.
  reply = { text: deltas(Math.ceil(chunkCount / 10)) }
  await call()
  reply = { text: ANSWER }
  for (let i = 0; i < callCount / 10; i++) await call()

  const streamWall: number[] = []
  const streamCpu: number[] = []
  const callWall: number[] = []
  const callCpu: number[] = []
  const big: ScriptReply = { text: deltas(chunkCount) }
  for (let run = 0; run < runs; run++) {
    reply = big
    let seen = 0
    const s = await timed(async () => {
      seen = await call()
    })
    if (seen < chunkCount) throw new Error(`saw ${seen} chunks, expected ${chunkCount}`)
    streamWall.push(chunkCount / (s.wallMs / 1000))
    streamCpu.push(chunkCount / (s.cpuMs / 1000))
    reply = { text: ANSWER }
    const c = await timed(async () => {
      for (let i = 0; i < callCount; i++) await call()
    })
    callWall.push((c.wallMs * 1000) / callCount)
    callCpu.push((c.cpuMs * 1000) / callCount)
  }
  process.stdout.write(
    `${JSON.stringify({
      streamChunksPerSecond: Math.round(median(streamWall)),
      streamChunksPerCpuSecond: Math.round(median(streamCpu)),
      callMicroseconds: Number(median(callWall).toFixed(2)),
      callCpuMicroseconds: Number(median(callCpu).toFixed(2)),
    })}\n`,
  )

}

await new AsyncLocalStorage<string>().run('bench', main)
