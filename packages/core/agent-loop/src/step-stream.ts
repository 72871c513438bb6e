import { createAssembler, type AssembledResponse } from '@deepseek-ai/dsh-llm'
import { checkAborted } from './cancellation'
import type { PreparedStep } from './step-prepare'
import type { TurnHost } from './turn-host'
import type { TurnState } from './turn-state'

/**
 * The second phase of a step: dispatches the prepared call and logs every
 * chunk as an `assistant/chunk` as it arrives (so the log holds what the
 * model said even if the process dies mid-stream), feeding the step's
 * assembler. Returns the assembled response, including a failed or aborted
 * call's (it arrives in-band, as a final `finish` chunk).
 *
 * A cancel stops reading at the next chunk and unwinds (`TurnAborted`); the
 * step's assembler and chunk seqs then hold what arrived, for the
 * interrupted anchor the turn's close writes.
 */
export async function streamStep(host: TurnHost, state: TurnState, prepared: PreparedStep): Promise<AssembledResponse> {
  const { step: current } = prepared
  const { turn, step } = current
  const { holder } = state
  const assembler = createAssembler()
  current.assembler = assembler
  const stream = prepared.call.stream(prepared.request)
  const signal = holder.signal
  for await (const chunk of stream) {
    if (signal.aborted) break
    current.chunkSeqs.push(host.append('assistant/chunk', { turn, step, chunk }).seq)
    assembler.push(chunk)
  }
  checkAborted(holder)
  return assembler.result()
}
