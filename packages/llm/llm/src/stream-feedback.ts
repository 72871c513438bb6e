/**
 * Gives V8's feedback for the chunk path of this package (the pump's
 * `checked` and `drive`, the assembler's `push`) the chunks that end an
 * answer before that path is first optimized.
 *
 * Why: a streamed answer is thousands of text deltas, then one `usage` and
 * one `finish` chunk. V8 optimizes the pump (whose `.then` handler inlines
 * `checked`, `drive` and the consumer's sink) and the assembler on the text
 * deltas alone, so the answer's last two chunks meet a `chunk.type` load that
 * has seen one hidden class and a `switch` case with no feedback: "wrong map",
 * and the whole compiled chain (sink and session append included) is thrown
 * away. The next answer (the bench's cold round, which follows a warm-up
 * answer) then runs its first thousands of chunks unoptimized until V8
 * compiles the chain again. Fed these shapes first, the optimized code
 * handles all three, and the end of an answer deoptimizes nothing of this
 * package (dsh-session primes its own chunk path the same way, at its first
 * log).
 *
 * The sample streams are the HTTP adapters' own kind of stream (`source`): a
 * network read's first chunk answered with a promise, the rest at hand,
 * without one, so both of the pump's paths (`await`/`resume` and its loop
 * over plain results) meet the end of an answer, with the real adapters'
 * result objects.
 *
 * The same for a long block's first join (`PIECE` deltas): the block
 * builder's join branch first runs at a long answer's 4,096th delta, where
 * it would meet no feedback and deoptimize, mid-answer.
 *
 * Feedback is kept per function, whoever calls it, and V8 allocates it only
 * once a function has run a few times, hence a few rounds. It runs once, at
 * the process's first `pump` (not when the module loads: a process that only
 * imports the package pays nothing), on its own objects (streams,
 * sources and assemblers nobody keeps, no signal), in the microtasks after
 * that pump's call (the long block synchronously): 2-5 ms measured on Node 20
 * under load, most of it compiling what the first stream would compile
 * anyway; no observable effect on any caller's stream.
 */
import { PIECE, createAssembler, type Assembler } from './assembler'
import type { ChunkTaker } from './chunk-sink'
import { BatchedChunks } from './http/batched-chunks'
import type { StreamChunk } from './stream'

/** A chunk source as `ProtocolStream` takes it (its `StreamSource`). */
interface SampleSource {
  open(): AsyncIterable<StreamChunk>
  readonly signal: undefined
  readonly route: string
}

/** Pumps `source` into `sink` through a new classifying `ProtocolStream` (passed in: that module calls this one). */
export type SamplePump = (source: SampleSource, sink: ChunkTaker) => Promise<void> | undefined

const ROUNDS = 24

/**
 * What an answer streams, as a model adapter writes it: text deltas, then
 * `usage` and `finish` (new objects per round). Only these three shapes: with
 * more, the chunk's field loads would see more hidden classes than V8 keeps
 * apart (four) and become generic lookups for every delta; an answer with
 * reasoning or tool calls meets those shapes in its first steps anyway.
 */
function samples(): StreamChunk[] {
  return [
    { type: 'text-delta', index: 0, text: 'a' },
    { type: 'text-delta', index: 0, text: 'b' },
    { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } },
    { type: 'finish', reason: { kind: 'stop' } },
  ]
}

/**
 * A chunk source as the HTTP adapters' streams are: a `BatchedChunks` over an
 * async generator of network reads (here, reads at hand: the generator waits
 * for nothing), with an `interrupt` as `HttpProviderAdapter` passes one.
 * `firsts` are the positions of the chunks that start a read (the first chunk
 * always does: a response's first read follows the request). So the sample
 * streams take exactly the paths a real answer takes: the first chunk of a
 * read answered with a promise (the pump's `await` and `resume`), the rest at
 * hand (the pump's loop: `drive`'s checks for a promise and a thenable, the
 * plain result taken as is), result objects of `BatchedChunks`' own class,
 * and `return()` after the `finish`. That `return()` stores the stream's end
 * in a field `BatchedChunks.next` reads, until then only ever `undefined`:
 * V8 had kept that first value as a constant in the pump's optimized code
 * (which inlines `next`), and the first real answer's `return()` deoptimized
 * it, at the end of the process's first answer ("code dependencies"). Stored
 * here first, on throwaway streams, it is a plain field from the start.
 */
function source(chunks: StreamChunk[], firsts: readonly number[]): SampleSource {
  return { route: 'prime/prime', signal: undefined, open: () => new BatchedChunks(reads(chunks, firsts), interrupt) }
}

/** The chunks as network reads, one batch per read. */
async function* reads(chunks: StreamChunk[], firsts: readonly number[]): AsyncGenerator<readonly StreamChunk[], void, undefined> {
  for (let read = 0; read < firsts.length; read++) yield chunks.slice(firsts[read], firsts[read + 1] ?? chunks.length)
}

function interrupt(): void {}

/**
 * Where the sample answer's reads start, by round: two reads of two chunks
 * (`usage` and `finish` arrive together, as an adapter yields its final
 * chunks), or a read of three and the `finish` alone; between them every kind
 * of chunk comes both with a promise and at hand.
 */
const READS: readonly (readonly number[])[] = [
  [0, 2],
  [0, 3],
]

/** The chunk and what it holds frozen, as the session hands a logged chunk on before the loop assembles it. */
function frozen(chunk: StreamChunk): StreamChunk {
  if (chunk.type === 'usage') Object.freeze(chunk.usage)
  else if (chunk.type === 'finish') Object.freeze(chunk.reason)
  return Object.freeze(chunk)
}

/** A sample stream's pull and sink call (see `ProtocolStream`'s `sample`): call sites no real stream reaches. */
export function pullSample(inner: AsyncIterator<StreamChunk> | Iterator<StreamChunk>): Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk> {
  return inner.next()
}

export function sinkSample(sink: ChunkTaker, chunk: StreamChunk): boolean {
  return sink.take(chunk)
}

/** A sample stream's sink: the chunk, frozen as the session hands a logged chunk on, into the sample's assembler. */
class SampleTaker implements ChunkTaker {
  declare private readonly assembler: Assembler

  constructor(assembler: Assembler) {
    this.assembler = assembler
  }

  take(chunk: StreamChunk): boolean {
    this.assembler.push(frozen(chunk))
    return true
  }
}

let primed = false

/** Whether the prime ran (for tests: it must not have run when the module loads). */
export function streamPathPrimed(): boolean {
  return primed
}

/** Runs `primeStreamPath` the first time it is called in the process. */
export function primeStreamPathOnce(pump: SamplePump): void {
  if (primed) return
  primed = true
  primeStreamPath(pump)
}

/**
 * Pumps the sample answer into an assembler, as the agent loop's step does
 * (the pump sees the adapter's chunks; the assembler, the logged ones, which
 * are frozen), a few times over. The streams run on their own, in the
 * microtasks after the call: they finish before a network read (a
 * macrotask) brings the first real chunk, and nothing waits for them.
 */
function primeStreamPath(pump: SamplePump): void {
  for (let round = 0; round < ROUNDS; round++) {
    const assembler = createAssembler()
    const pumped = pump(source(samples(), READS[round & 1]!), new SampleTaker(assembler))
    if (pumped !== undefined) void pumped.then(() => assembler.result())
  }
  // One block long enough to be joined in pieces (`PIECE` deltas): a long answer first joins at its 4,096th delta,
  // and that branch of the block builder would otherwise meet it with no feedback, mid-answer, and deoptimize.
  const long = createAssembler()
  const delta = frozen({ type: 'text-delta', index: 0, text: 'a' })
  for (let i = 0; i <= PIECE; i++) long.push(delta)
  long.push(frozen({ type: 'finish', reason: { kind: 'stop' } }))
  long.result()
}
