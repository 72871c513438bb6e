/**
 * Scenario 4, streaming (spec §13: ≥ 500,000 chunks/s through loop, log and
 * one `session/event` listener; ≥ 250,000 with JSONL persistence). One turn
 * whose answer is `chunks` text deltas, with one `session/event` listener
 * counting the chunk events; once without persistence and once with
 * `@deepseek-ai/dsh-session-jsonl` (the turn ends with its fsync). The figure
 * is chunks per second of the turn's wall time (and of the process's CPU
 * time, steadier on a shared machine), after a warm-up turn of a tenth of
 * the size on another agent of the same spine.
 */
import { timed } from '../lib/measure.ts'
import { defineScenario } from '../lib/scenario.ts'
import { withTempDir } from '../lib/temp-dir.ts'
import { manyDeltas } from '../subjects/workload.ts'

interface Params {
  chunks: number
}

/** Chunks per second of the measured turn, by wall time and by process CPU time. */
async function chunksPerSecond(chunks: number, jsonlDirectory: string | undefined): Promise<{ wall: number; cpu: number }> {
  const dsh = await import('../subjects/dsh.ts')
  const deltas = { warm: { text: manyDeltas(Math.ceil(chunks / 10)) }, measured: { text: manyDeltas(chunks) } }
  let reply = deltas.warm
  const spine = await dsh.spine({ respond: () => reply, jsonlDirectory })
  let seen = 0
  spine.root.on('session/event', (_session, event) => {
    if (event.type === 'assistant/chunk') seen++
  })
  try {
    const warm = await spine.create('bench-warm')
    await dsh.turn(warm.agent, 'Warm up.')
    await warm.dispose()
    reply = deltas.measured
    const { agent } = await spine.create('bench-stream')
    seen = 0
    const time = await timed(() => dsh.turn(agent, 'Write a long answer.'))
    // The model adds a usage chunk and the finish chunk to the text deltas.
    if (seen < chunks) throw new Error(`the listener saw ${seen} chunk events, expected at least ${chunks}`)
    return { wall: chunks / (time.wallMs / 1000), cpu: chunks / (time.cpuMs / 1000) }
  } finally {
    await spine.dispose()
  }
}

export default defineScenario<Params>({
  id: 'streaming',
  title: '4. Streaming',
  describe: (p) => `one turn of ${p.chunks.toLocaleString('en-US')} text deltas with one session/event listener, without and with JSONL persistence`,
  subjects: ['dsh'],
  metrics: [
    { key: 'chunksPerSecond', label: 'no persistence', unit: 'chunks/s', digits: 0, compare: false, budget: { op: '>=', limit: 500_000, source: '§13' } },
    { key: 'cpuChunksPerSecond', label: 'no persistence (per CPU second)', unit: 'chunks/s', digits: 0, compare: false },
    { key: 'chunksPerSecondJsonl', label: 'JSONL persistence', unit: 'chunks/s', digits: 0, compare: false, budget: { op: '>=', limit: 250_000, source: '§13' } },
    { key: 'cpuChunksPerSecondJsonl', label: 'JSONL persistence (per CPU second)', unit: 'chunks/s', digits: 0, compare: false },
  ],
  params: (mode) => ({ chunks: mode === 'full' ? 100_000 : 2_000 }),
  runs: (mode) => (mode === 'full' ? 5 : 1),
  async run(_subject, params) {
    const plain = await chunksPerSecond(params.chunks, undefined)
    const jsonl = await withTempDir('streaming', (dir) => chunksPerSecond(params.chunks, dir))
    return { chunksPerSecond: plain.wall, cpuChunksPerSecond: plain.cpu, chunksPerSecondJsonl: jsonl.wall, cpuChunksPerSecondJsonl: jsonl.cpu }
  },
})
