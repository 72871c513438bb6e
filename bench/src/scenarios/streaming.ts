/**
 * Scenario 4, streaming (docs/contracts.md#budgets: ≥ 500,000 chunks/s
 * through loop, log and one `session/event` listener; ≥ 250,000 with JSONL
 * persistence). One turn whose answer is `chunks` text deltas, with one
 * listener counting the deltas it is told about: dsh a `session/event`
 * listener (`assistant/chunk`), pi-agent-core an `agent.subscribe` listener
 * (`message_update` of a `text_delta`), the AI SDK `streamText`'s `onChunk`
 * (`text-delta`). dsh also runs it with `@deepseek-ai/dsh-session-jsonl` (the
 * turn ends with its fsync); the peers keep nothing on disk.
 *
 * Every subject is fed the same way, as a network feeds it: the deltas arrive
 * `batch` per macrotask through the subject's own transport seam (see
 * `lib/feed.ts` for why and for the batch size). The figure is chunks per
 * second of the turn's wall time (and of the process's CPU time, steadier on
 * a shared machine), after a warm-up turn of a tenth of the size on another
 * agent; the same turn is then repeated on new agents for `rounds` rounds in
 * all, and the last round is the steady-state figure.
 */
import { STREAM_BATCH } from '../lib/feed.ts'
import { COLD_ROUND_METRICS, timed } from '../lib/measure.ts'
import { defineScenario, type Metrics, type SubjectId } from '../lib/scenario.ts'
import { withTempDir } from '../lib/temp-dir.ts'
import { manyDeltas } from '../subjects/workload.ts'

export interface StreamingParams {
  chunks: number
  /** Deltas per macrotask (see `lib/feed.ts`). */
  batch: number
  /** Measured turns, each on a new agent: the first is the standard figure, the last the steady state. */
  rounds: number
}

/** One subject set up for the scenario: `prepare` builds a fresh agent whose model answers with `deltas`. */
interface StreamSubject {
  /** Returns the turn to time; the listener's count is reset. */
  prepare(deltas: readonly string[]): Promise<() => Promise<void>>
  /** Deltas the listener counted since the last `prepare`. */
  seen(): number
  /** Lets go of the agents created so far (outside the timed region). */
  release(): Promise<void>
  dispose(): Promise<void>
}

const PROMPT = 'Write a long answer.'

async function streamSubject(subject: SubjectId, batch: number, jsonlDirectory: string | undefined): Promise<StreamSubject> {
  let seen = 0
  if (subject === 'dsh') {
    const dsh = await import('../subjects/dsh.ts')
    let reply: { text: readonly string[] } = { text: [] }
    const spine = await dsh.spine({ respond: () => reply, jsonlDirectory, streamBatch: batch })
    spine.root.on('session/event', (_session, event) => {
      if (event.type === 'assistant/chunk' && event.data.chunk.type === 'text-delta') seen++
    })
    const handles: Array<{ dispose(): Promise<void> }> = []
    let agents = 0
    return {
      async prepare(deltas) {
        reply = { text: deltas }
        const handle = await spine.create(`bench-stream-${agents++}`)
        handles.push(handle)
        seen = 0
        return () => dsh.turn(handle.agent, PROMPT)
      },
      seen: () => seen,
      async release() {
        for (const handle of handles.splice(0)) await handle.dispose()
      },
      dispose: () => spine.dispose(),
    }
  }
  if (subject === 'pi-agent-core') {
    const pi = await import('../subjects/pi.ts')
    return {
      async prepare(deltas) {
        const reply = { text: deltas }
        const agent = pi.agent(() => reply, [], batch)
        agent.subscribe((event) => {
          if (event.type === 'message_update' && event.assistantMessageEvent.type === 'text_delta') seen++
        })
        seen = 0
        return async () => {
          await agent.prompt(PROMPT)
        }
      },
      seen: () => seen,
      release: async () => {},
      dispose: async () => {},
    }
  }
  const ai = await import('../subjects/ai-sdk.ts')
  return {
    async prepare(deltas) {
      const reply = { text: deltas }
      const conversation = new ai.Conversation(ai.mockModel(() => reply, batch))
      seen = 0
      return () =>
        conversation.turn(PROMPT, undefined, ({ chunk }) => {
          if (chunk.type === 'text-delta') seen++
        })
    },
    seen: () => seen,
    release: async () => {},
    dispose: async () => {},
  }
}

interface Rates {
  wall: number
  cpu: number
  /** Minor page faults of the round. */
  faults: number
}

/** Chunks per second of the first and the last measured round, by wall time and by process CPU time. */
async function chunksPerSecond(subjectId: SubjectId, params: StreamingParams, jsonlDirectory: string | undefined): Promise<{ cold: Rates; steady: Rates }> {
  const subject = await streamSubject(subjectId, params.batch, jsonlDirectory)
  const warm = manyDeltas(Math.ceil(params.chunks / 10))
  const measured = manyDeltas(params.chunks)
  try {
    await (await subject.prepare(warm))()
    const rounds: Rates[] = []
    for (let round = 0; round < params.rounds; round++) {
      await subject.release()
      const turn = await subject.prepare(measured)
      const time = await timed(turn)
      if (subject.seen() !== params.chunks) throw new Error(`round ${round + 1}: the listener saw ${subject.seen()} text deltas, expected ${params.chunks}`)
      rounds.push({ wall: params.chunks / (time.wallMs / 1000), cpu: params.chunks / (time.cpuMs / 1000), faults: time.faults })
    }
    return { cold: rounds[0]!, steady: rounds[rounds.length - 1]! }
  } finally {
    await subject.release()
    await subject.dispose()
  }
}

const rate = (key: string, label: string, budget?: number) =>
  ({
    key,
    label,
    unit: 'chunks/s',
    digits: 0,
    compare: true,
    higherIsBetter: true,
    ...(budget === undefined ? {} : { budget: { op: '>=' as const, limit: budget, source: '§13' } }),
  }) as const

export default defineScenario<StreamingParams>({
  id: 'streaming',
  title: '4. Streaming',
  describe: (p) =>
    `one turn of ${p.chunks.toLocaleString('en-US')} text deltas fed ${p.batch} per macrotask, with one listener; dsh also with JSONL persistence; steady state: round ${p.rounds} of ${p.rounds} such turns in one process, each on a new agent`,
  subjects: ['dsh', 'pi-agent-core', 'ai-sdk'],
  metrics: [
    rate('chunksPerSecond', 'no persistence', 500_000),
    rate('cpuChunksPerSecond', 'no persistence (per CPU second)'),
    rate('steadyChunksPerSecond', 'steady state: no persistence'),
    rate('steadyCpuChunksPerSecond', 'steady state: no persistence (per CPU second)'),
    ...COLD_ROUND_METRICS,
    rate('chunksPerSecondJsonl', 'JSONL persistence', 250_000),
    rate('cpuChunksPerSecondJsonl', 'JSONL persistence (per CPU second)'),
    rate('steadyChunksPerSecondJsonl', 'steady state: JSONL persistence'),
    rate('steadyCpuChunksPerSecondJsonl', 'steady state: JSONL persistence (per CPU second)'),
  ],
  criterion: { label: 'chunks per second, no persistence', wall: 'chunksPerSecond', cpu: 'cpuChunksPerSecond', steadyWall: 'steadyChunksPerSecond', steadyCpu: 'steadyCpuChunksPerSecond' },
  params: (mode) => (mode === 'full' ? { chunks: 100_000, batch: STREAM_BATCH, rounds: 5 } : { chunks: 2_000, batch: STREAM_BATCH, rounds: 2 }),
  // The AI SDK streams about 10,000–25,000 chunks/s here: one run of its six turns takes about a minute.
  runs: (mode, subject) => (mode === 'smoke' || subject === 'ai-sdk' ? 1 : 5),
  async run(subject, params) {
    const plain = await chunksPerSecond(subject, params, undefined)
    const metrics: Metrics = {
      chunksPerSecond: plain.cold.wall,
      cpuChunksPerSecond: plain.cold.cpu,
      steadyChunksPerSecond: plain.steady.wall,
      steadyCpuChunksPerSecond: plain.steady.cpu,
      faults: plain.cold.faults,
    }
    if (subject !== 'dsh') return metrics
    const jsonl = await withTempDir('streaming', (dir) => chunksPerSecond(subject, params, dir))
    return {
      ...metrics,
      chunksPerSecondJsonl: jsonl.cold.wall,
      cpuChunksPerSecondJsonl: jsonl.cold.cpu,
      steadyChunksPerSecondJsonl: jsonl.steady.wall,
      steadyCpuChunksPerSecondJsonl: jsonl.steady.cpu,
    }
  },
})
