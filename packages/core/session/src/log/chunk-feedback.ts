/**
 * Gives V8's feedback for the chunk path the shapes that end an answer before
 * that path is first optimized.
 *
 * Why: a streamed answer is thousands of text deltas, then one `usage` and
 * one `finish` chunk. V8 optimizes the chunk path (`chunkDataShape`,
 * `freezeChunk`, `ChunkPack`'s `add`/`addEntry`, and the session's `append`,
 * which inlines them) on the text deltas alone, so the answer's last two
 * chunks meet loads and branches it has no feedback for, and deoptimize all
 * of it; the next answer (the bench's cold round, which follows a warm-up
 * answer) then runs its first thousands of chunks unoptimized until V8
 * compiles the path again. Fed these shapes first, the optimized code handles
 * them all, and the end of an answer deoptimizes nothing of this package.
 *
 * Feedback is kept per function, whoever calls it, and V8 allocates it only
 * once a function has run for a while, hence a few rounds. It runs once, when
 * the process's first session log is made (not when the module loads: a
 * process that only imports the package pays nothing), on its own objects (a
 * pack nobody keeps): 2-10 ms measured (Node 20-24, loaded machine), most of
 * it compiling what a session's first chunk would compile anyway; no
 * observable effect.
 */
import { ChunkPack } from './chunk-pack'
import { chunkDataShape, freezeChunk } from './chunk-shape'
import { newEnvelope } from './envelope'
import { primeListenerCalls } from './event-dispatch'
import { SlotList } from './slot-list'

const ROUNDS = 24

/**
 * What ends every answer after its deltas, as a model adapter writes it (new objects: each is frozen when packed).
 * Only these three: with every shape, the loads of a chunk's fields would see more hidden classes than V8 keeps
 * apart (four) and become slower generic lookups for every delta; an answer with reasoning or tool calls meets
 * their shapes in its first steps, long before its deltas are counted in thousands.
 */
function samples(round: number): Record<string, unknown>[] {
  // Two hidden classes each for the `usage` and `reason` objects (other keys, not other chunk keys): V8 types an
  // object field by the class of what it first holds, and code that read the field (`freezeChunk`, inlined into
  // `admitChunk`) depends on that type. Typed by the sample's class, the field was widened by an adapter's first
  // real usage chunk, which deoptimized the chunk path at the end of the process's first answer (`--trace-deopt`:
  // "code dependencies"). Both classes seen here, the field is typed "any object" before the path is optimized.
  const odd = (round & 1) === 1
  return [
    { type: 'text-delta', index: 0, text: 'a' },
    { type: 'usage', usage: odd ? { inputTokens: 1, outputTokens: 1, reasoningTokens: 0 } : { inputTokens: 1, outputTokens: 1 } },
    { type: 'finish', reason: odd ? { kind: 'error', message: 'a' } : { kind: 'stop' } },
  ]
}

let primed = false

/** Runs `primeChunkPath` the first time it is called in the process. */
export function primeChunkPathOnce(): void {
  if (primed) return
  primed = true
  primeChunkPath()
}

/** Runs each sample chunk through the functions a session's append and packing call, as they call them. */
function primeChunkPath(): void {
  // Tiny columns and pages: the pack grows and seals pages from `add` several times, as a long answer's does.
  const pack = new ChunkPack(2, 4)
  // A log's entries as a session stores them: each round is a step, opened by an object entry, whose first chunk
  // starts a run of packed entries and whose later ones extend it (`packAt`'s two paths).
  const slots = new SlotList()
  let seq = 0
  for (let round = 0; round < ROUNDS; round++) {
    slots.put(seq, newEnvelope('step/start', seq, round, Object.freeze({ turn: 1, step: round + 1 })))
    seq++
    for (const chunk of samples(round)) {
      const data = { turn: 1, step: round + 1, chunk }
      const shape = chunkDataShape(data)
      if (shape === -1) continue
      freezeChunk(chunk, shape)
      Object.freeze(data)
      slots.put(seq, newEnvelope('assistant/chunk', seq, round, data))
      const index = pack.add(data.turn, data.step, round, chunk, shape)
      if (index >= 0) slots.packAt(seq, index)
      seq++
    }
  }
  for (let i = 0; i < pack.count; i++) pack.event(i, i)
  // Every entry read back, object entries and packed ones, as a session's readers do: a step's end checks its
  // packed chunks (`get` of packed entries only, thousands in a long answer) and the next session reads its meta (an
  // object entry); `get` optimized on the packed entries alone was deoptimized by that first object entry
  // ("insufficient type feedback" for `objects`), just before the next answer.
  for (let at = 0; at < seq; at++) slots.get(at)
  // The dispatch's listener call site sees more than one target before it is optimized (see `callListener`).
  primeListenerCalls(slots, newEnvelope('step/start', seq, 0, Object.freeze({ turn: 1, step: 1 })))
}
