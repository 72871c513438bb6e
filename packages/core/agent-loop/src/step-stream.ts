import { createAssembler, type AssembledResponse, type Assembler, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { SessionError } from '@deepseek-ai/dsh-session'
import { checkAborted } from './cancellation'
import type { PreparedStep } from './step-prepare'
import type { TurnHost } from './turn-host'
import type { TurnState } from './turn-state'

/**
 * The pump a `ctx.llm` call stream offers besides iteration (dsh-llm's
 * `CallStream.pump`): every chunk handed to `sink` synchronously, in order,
 * with no promise per chunk; `undefined` when the stream finished
 * synchronously, else a promise that settles when it finishes. `sinkChecks`:
 * the signal the sink itself reads before taking each chunk (when it is the
 * call's own, the pump does not read it per chunk too). The sink may be an
 * object whose `take` the pump calls as its method (dsh-llm's `ChunkTaker`).
 */
interface Pumpable {
  pump?(sink: { take(chunk: StreamChunk): boolean }, sinkChecks?: AbortSignal): Promise<void> | undefined
}

/**
 * The second phase of a step: dispatches the prepared call and logs every
 * chunk as an `assistant/chunk` as it arrives (so the log holds what the
 * model said even if the process dies mid-stream), feeding the step's
 * assembler. Returns the assembled response, including a failed or aborted
 * call's (it arrives in-band, as a final `finish` chunk).
 *
 * The chunks are read with the stream's pump when it has one (what
 * `ctx.llm`'s prepared calls return): chunks already at hand are logged in one
 * synchronous loop, and each chunk that arrives later costs its source's
 * promise and one `.then`, not an `await` of the step. Another stream is
 * iterated. The result is returned synchronously when the stream finished
 * synchronously.
 *
 * A cancel stops reading at the next chunk and unwinds (`TurnAborted`); the
 * step's assembler and chunk seqs then hold what arrived, for the
 * interrupted anchor the turn's close writes.
 */
export function streamStep(host: TurnHost, state: TurnState, prepared: PreparedStep): AssembledResponse | Promise<AssembledResponse> {
  const { step: current } = prepared
  const { holder } = state
  const assembler = createAssembler()
  current.assembler = assembler
  const stream = prepared.call.stream(prepared.request) as AsyncIterable<StreamChunk> & Pumpable
  const sink = new StepSink(host, holder, current, assembler)
  if (typeof stream.pump !== 'function') return finishLater(holder, assembler, iterate(stream, sink))
  // Every chunk at hand (an in-memory model): the step goes on in the same tick, with no promise.
  // The sink reads the turn's abort first thing (`holder.aborted`, which agrees with the signal the
  // request carries), so the pump need not read that signal before every chunk as well.
  const pending = stream.pump(sink, holder.signal)
  return pending === undefined ? finish(holder, assembler) : finishLater(holder, assembler, pending)
}

/** The response once the stream finished (a closure made here, not in `streamStep`: no context per step there). */
function finishLater(holder: TurnState['holder'], assembler: Assembler, finished: Promise<void>): Promise<AssembledResponse> {
  return finished.then(() => finish(holder, assembler))
}

/**
 * The step's chunk sink: logs the chunk, keeps its seq, feeds the assembler;
 * false once the turn was cancelled. An object whose `take` the pump calls as
 * its method, not a closure made per step: the pump's optimized code inlines
 * its sink, and every step's closure would be a new function to it, which
 * deoptimized the pump (and the session's append it had inlined) at the
 * start of a process's second step ("wrong call target"); `take` is one
 * function for every step of every agent.
 */
class StepSink {
  declare private readonly host: TurnHost
  declare private readonly holder: TurnState['holder']
  declare private readonly session: TurnHost['session']
  declare private readonly seqs: PreparedStep['step']['chunkSeqs']
  declare private readonly assembler: Assembler
  declare private readonly turn: number
  declare private readonly step: number

  constructor(host: TurnHost, holder: TurnState['holder'], current: PreparedStep['step'], assembler: Assembler) {
    this.host = host
    this.holder = holder
    this.session = host.session
    this.seqs = current.chunkSeqs
    this.assembler = assembler
    this.turn = current.turn
    this.step = current.step
  }

  take(chunk: StreamChunk): boolean {
    // The holder's `aborted`, which always agrees with its signal's (the holder owns the controller).
    if (this.holder.aborted) return false
    let seq: number
    // Straight to the session (a wrapped `append` included), not through the agent's `append`: one call
    // level less per chunk. A refusal is the same refused-write rule (`TurnHost.refused`).
    try {
      seq = this.session.append('assistant/chunk', { turn: this.turn, step: this.step, chunk }).seq
    } catch (error) {
      return this.refusedChunk(chunk, error)
    }
    this.seqs.push(seq)
    this.assembler.push(chunk)
    return true
  }

  /**
   * The log refused `chunk`. Refused as data (`INVALID_EVENT`: nothing was
   * committed, the log and the loop still agree), the adapter's stream is
   * broken, not the log: dsh-llm's guard checks the protocol, not every
   * field (a usage field set to `undefined`, which JSON drops, passes it).
   * The step then ends as a malformed stream, an ordinary turn failure
   * (R-ERR-1): its finish is logged in the refused chunk's place, and false
   * stops the source. Any other refusal is the refused-write rule. Off the
   * per-chunk path: `take` stays small.
   */
  private refusedChunk(chunk: StreamChunk, error: unknown): false {
    if (!(error instanceof SessionError && error.code === 'INVALID_EVENT')) throw this.host.refused('assistant/chunk', error)
    const message = `the model stream yielded a ${String(chunk.type)} chunk the session log refuses: ${error.message}`
    const finish: StreamChunk = { type: 'finish', reason: { kind: 'error', failure: { code: 'MALFORMED_STREAM', message } } }
    let seq: number
    try {
      seq = this.session.append('assistant/chunk', { turn: this.turn, step: this.step, chunk: finish }).seq
    } catch (refused) {
      throw this.host.refused('assistant/chunk', refused)
    }
    this.seqs.push(seq)
    this.assembler.push(finish)
    return false
  }
}

function finish(holder: TurnState['holder'], assembler: Assembler): AssembledResponse {
  checkAborted(holder)
  return assembler.result()
}

async function iterate(stream: AsyncIterable<StreamChunk>, sink: StepSink): Promise<void> {
  for await (const chunk of stream) if (!sink.take(chunk)) break
}
