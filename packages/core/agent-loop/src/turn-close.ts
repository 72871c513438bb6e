import { LlmError, createAssistantMessage, toLlmFailure, type LlmFailure } from '@deepseek-ai/dsh-llm'
import type { TurnEndReason } from '@deepseek-ai/dsh-session'
import { failureReason } from './failure'
import { stopDeferring } from './injections'
import { finishStep, settleResults, writeAnchor } from './step-accept'
import { ToolBatch } from './tool-batch'
import type { TurnHost } from './turn-host'
import type { StepState, TurnState } from './turn-state'

/**
 * Closes the turn, whatever ended it: the interrupted step if one is open,
 * leftover steering (requeued, or discarded by a terminal stop), the end
 * reason (the agent's failure wins, then dispose, then a terminal stop, then
 * cancel, then the turn's own failure), the holder retired (`openTurn`
 * cleared), `turn/end`, `agent/error` (the turn's own failure, then the
 * agent's, each once), then the durability checkpoint (R-LOOP-5): the
 * returned promise settles once the turn's flush did (a failed flush is
 * reported, never rejected); `undefined` when there was nothing to flush.
 */
export function closeTurn(host: TurnHost, state: TurnState): Promise<void> | undefined {
  const step = state.step
  // A step the log never opened, or whose step/end was written or refused, is not closed again.
  if (step && step.logged && !step.ended) return closeWithStep(host, state, step)
  return endTurn(host, state)
}

async function closeWithStep(host: TurnHost, state: TurnState, step: StepState): Promise<void> {
  try {
    await closeInterruptedStep(host, state, step)
  } catch (error) {
    if (!host.failed.error) state.failure ??= { error, step: step.step }
  }
  await endTurn(host, state)
}

/** Everything of the close after the open step: steering, the end reason, `turn/end`, reports, the flush. */
function endTurn(host: TurnHost, state: TurnState): Promise<void> | undefined {
  try {
    if (state.terminal !== undefined) host.inboxState.discardSteering()
    // A failed agent leaves leftover steering pending in the log, for a resume.
    else if (host.inboxState.hasSteering && !host.disposing && !host.failed.error) host.inboxState.requeueSteering()
  } catch (error) {
    if (!host.failed.error) throw error
  }
  // Decided after the steering moved: a cancel from one of those events' listeners still counts.
  const reason = endReason(host, state)
  host.openTurn = undefined
  try {
    // A reason the loop built; an error's failure came from a plugin or a provider and is checked.
    if (reason.kind === 'error') host.append('turn/end', { turn: state.turn, reason })
    else {
      // A completed turn's end is the shared frozen `COMPLETED`: the data is then frozen whole here, and the log has
      // nothing to walk; another reason the loop built is frozen by the log.
      const data = { turn: state.turn, reason }
      host.appendBuilt('turn/end', Object.isFrozen(reason) ? Object.freeze(data) : data)
    }
  } catch (error) {
    // Refused (the agent failed): the turn stays open in the log, as far as it accepted.
    if (error !== host.failed.error) throw error
  }
  // The turn's own failure first (a plugin's, a provider's), then the agent's, each once.
  if (state.failure && (reason.kind === 'error' || host.failed.error)) {
    host.events.emit('agent/error', state.turn, state.failure.step, state.failure.error)
  }
  host.reportFailure(state.turn, state.failedStep)
  const flushed = host.flush()
  if (!flushed) {
    if (state.terminal !== undefined) host.endTerminalWindow()
    return undefined
  }
  return afterFlush(host, state, flushed)
}

/** The end of a turn whose flush had something to do (closures made here: no context per call of `endTurn`). */
function afterFlush(host: TurnHost, state: TurnState, flushed: Promise<void>): Promise<void> {
  return flushed.then(
    () => {
      if (state.terminal !== undefined) host.endTerminalWindow()
    },
    () => {
      // The flush failed the agent (PERSISTENCE_FAILED): reported here unless the agent's failure was reported already.
      host.reportFailure(state.turn, undefined)
      if (state.terminal !== undefined) host.endTerminalWindow()
    },
  )
}

/**
 * Closes a step that a cancel, a failure or dispose interrupted (R-CAN-4): a
 * stream that was running keeps what arrived in an `interrupted` anchor; calls
 * already dispatched keep their real results, calls never started get a
 * synthetic `ABORTED_BEFORE_DISPATCH` pair, in model order; then the admitted
 * contexts and deferred injections, `agent/post-step` (with the aborted signal,
 * on a cancel), and `step/end`.
 *
 * After the agent failed, each part is attempted once and a refusal moves on
 * to the next (the log decides how far the step closes); nothing refused is
 * written again, and no plugin checkpoint runs.
 */
async function closeInterruptedStep(host: TurnHost, state: TurnState, step: StepState): Promise<void> {
  await tolerant(host, () => {
    if (!step.anchored && step.assembler && step.source) {
      const source = step.source
      const result = step.assembler.count ? step.assembler.result() : undefined
      writeAnchor(host, step, createAssistantMessage(step.assembler.partial(), { source }), result?.usage, { kind: 'aborted' }, true)
    }
  })
  if (step.calls.length) {
    step.batch ??= new ToolBatch(step.calls, host, host.env.tools, host.agent, step.turn, step.step, 1, state.holder)
    const batch = step.batch
    await tolerant(host, () => batch.finishAborted())
  }
  await tolerant(host, () => settleResults(host, step))
  await tolerant(host, () => stopDeferring(host, step))
  if (state.holder.aborted && !state.failure && !host.failed.error) {
    try {
      await host.checkpoints.serial('agent/post-step', [host.agent, step.turn, step.step, state.holder.signal])
    } catch (error) {
      host.logger.warn(error)
    }
  }
  finishStep(host, step)
}

/** Runs one part of a close; once the agent failed, a refusal (or any throw) there does not stop the close. */
async function tolerant(host: TurnHost, part: () => void | Promise<void>): Promise<void> {
  try {
    await part()
  } catch (error) {
    if (!host.failed.error) throw error
  }
}

function endReason(host: TurnHost, state: TurnState): TurnEndReason {
  // The agent's failure wins: the log must say the turn did not end normally.
  const failure = host.failed.error
  if (failure) return failureReason(failure)
  if (host.disposing) return { kind: 'aborted' }
  if (state.terminal !== undefined) return { kind: 'stopped', by: state.terminal }
  if (state.holder.aborted) return { kind: 'aborted' }
  if (state.failure) return { kind: 'error', failure: describeFailure(state.failure.error) }
  return state.end ?? { kind: 'completed' }
}

/** A structured, JSON-safe failure for `turn/end`. */
function describeFailure(error: unknown): LlmFailure | { code: string; message: string } {
  if (error instanceof LlmError) return error.failure
  const code = (error as { code?: unknown } | null)?.code
  const message = error instanceof Error ? error.message : String(error)
  if (typeof code === 'string' && code) return { code, message }
  const failure = toLlmFailure(error)
  return failure.code === 'UNKNOWN' ? { code: 'PLUGIN_ERROR', message } : failure
}
