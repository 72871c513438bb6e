import {
  LlmError,
  createAssistantMessage,
  toolCallsOf,
  type AssembledResponse,
  type AssistantMessage,
  type FinishReason,
  type TokenUsage,
} from '@deepseek-ai/dsh-llm'
import { TurnAborted, checkAborted } from './cancellation'
import { checkAssistant } from './decision-checks'
import { appendDeferred, stopDeferring } from './injections'
import { contextMessages, placeInput, userMessageData } from './placement'
import { ToolBatch } from './tool-batch'
import type { TurnHost } from './turn-host'
import type { StepOutcome, StepState, TurnState } from './turn-state'

/**
 * The last phase of a step (R-LOOP-2, R-ERR-1): what the model answered is
 * accepted into the log, in this order:
 *
 * 1. a failed or aborted provider call writes its one anchor with empty
 *    content, closes the step and returns `failed` (for `agent/request-error`);
 * 2. `agent/step-result` over the assembled message, then exactly one
 *    `assistant/message` anchor with the transformed content, the chunk seqs
 *    and usage (if step-result fails: an empty-content anchor, then the
 *    failure is rethrown as an ordinary turn failure);
 * 3. the tool batch (`tool-batch.ts`), then the calls' contexts and the
 *    deferred injections;
 * 4. the steering checkpoint: every pending steering item is claimed and
 *    written as `steering/message`s; the deferral window ends;
 * 5. `agent/post-step`, then `step/end`.
 *
 * A cancel unwinds (`TurnAborted`) and the turn's close finishes the step.
 * The outcome is returned synchronously when nothing had to be awaited (a
 * text answer with no `agent/step-result` or `agent/post-step` listener).
 */
export function acceptStep(
  host: TurnHost,
  state: TurnState,
  current: StepState,
  result: AssembledResponse,
): StepOutcome | Promise<StepOutcome> {
  const source = current.source!
  if (result.finishReason.kind === 'error' || result.finishReason.kind === 'aborted') {
    // A failed provider call still writes its one anchor, with empty content.
    writeAnchor(host, current, createAssistantMessage([], { source }), result.usage, result.finishReason)
    finishStep(host, current)
    const failure = result.finishReason.failure ?? { code: 'ABORTED' as const, message: 'the provider aborted the call' }
    return { kind: 'failed', error: new LlmError(failure), failure }
  }
  const assembled = createAssistantMessage(result.content, { source })
  if (host.checkpoints.heard('agent/step-result')) return acceptTransformed(host, state, current, result, assembled)
  // Nobody transforms the answer: the anchor is the assembled message itself (built from the step's admitted chunks).
  checkAborted(state.holder)
  writeAnchor(host, current, assembled, result.usage, result.finishReason, false, true)
  return afterAnchor(host, state, current)
}

/** `agent/step-result` over the assembled message, checked, then the anchor (a listener is heard). */
async function acceptTransformed(
  host: TurnHost,
  state: TurnState,
  current: StepState,
  result: AssembledResponse,
  assembled: AssistantMessage,
): Promise<StepOutcome> {
  const { holder } = state
  const source = current.source!
  try {
    const transformed = host.checkpoints.waterfall('agent/step-result', [host.agent, current.turn, current.step, assembled, holder.signal], () => assembled)
    const message = transformed instanceof Promise ? await transformed : transformed
    checkAssistant(message)
    checkAborted(holder)
    // The listener's message: a log refusal of its data is the listener's bug (INVALID_DECISION), as a failed check is.
    writeAnchor(host, current, message, result.usage, result.finishReason, false, false, 'agent/step-result')
  } catch (error) {
    // Under a cancel the step closes as a cancel does (an interrupted anchor keeps what arrived); after a refused
    // write (the agent failed, its holder aborted) the anchor is never written again.
    if (!(error instanceof TurnAborted) && !holder.aborted) {
      writeAnchor(host, current, createAssistantMessage([], { source, id: assembled.id }), result.usage, result.finishReason)
    }
    throw error
  }
  return afterAnchor(host, state, current)
}

/** After the anchor: the tool batch if the answer called tools, then the rest of the step (synchronous for a text answer nobody listens to). */
function afterAnchor(host: TurnHost, state: TurnState, current: StepState): StepOutcome | Promise<StepOutcome> {
  return current.calls.length ? runBatch(host, state, current) : settleStep(host, state, current)
}

/**
 * The step's tool batch, then the rest of the step. Not an async function: a
 * batch that ended synchronously (every stage had nothing to wait for) goes
 * on to the rest of the step with no promise; a broken batch throws (or
 * rejects) its refusal.
 */
function runBatch(host: TurnHost, state: TurnState, current: StepState): StepOutcome | Promise<StepOutcome> {
  const { env } = host
  const { holder } = state
  const { turn, step } = current
  current.batch = new ToolBatch(current.calls, host, env.tools, host.agent, turn, step, env.maxParallelToolCalls, holder)
  const ran = current.batch.run()
  if (ran) return settleLater(host, state, current, ran)
  checkAborted(holder)
  return settleStep(host, state, current)
}

/** The rest of the step once its batch ended (a closure made here: no context per call of `runBatch`). */
function settleLater(host: TurnHost, state: TurnState, current: StepState, ran: Promise<void>): Promise<StepOutcome> {
  return ran.then(() => {
    checkAborted(state.holder)
    return settleStep(host, state, current)
  })
}

/** The calls' contexts and deferred injections, the steering checkpoint, `agent/post-step` (awaited only when heard), `step/end`. */
function settleStep(host: TurnHost, state: TurnState, current: StepState): StepOutcome | Promise<StepOutcome> {
  settleResults(host, current)
  claimSteering(host, current)
  stopDeferring(host, current)
  if (!host.checkpoints.heard('agent/post-step')) return endStep(host, state, current)
  const posted = host.checkpoints.serial('agent/post-step', [host.agent, current.turn, current.step, state.holder.signal])
  return posted instanceof Promise ? endStepLater(host, state, current, posted) : endStep(host, state, current)
}

function endStepLater(host: TurnHost, state: TurnState, current: StepState, posted: Promise<unknown>): Promise<StepOutcome> {
  return posted.then(() => endStep(host, state, current))
}

function endStep(host: TurnHost, state: TurnState, current: StepState): StepOutcome {
  checkAborted(state.holder)
  finishStep(host, current)
  return DONE[(current.calls.length > 0 ? 1 : 0) + (current.wroteSteering ? 2 : 0)]!
}

/** The four `done` outcomes, shared (indexed by hadToolCalls + 2 × wroteSteering). */
const DONE: readonly StepOutcome[] = [
  Object.freeze({ kind: 'done', hadToolCalls: false, wroteSteering: false }),
  Object.freeze({ kind: 'done', hadToolCalls: true, wroteSteering: false }),
  Object.freeze({ kind: 'done', hadToolCalls: false, wroteSteering: true }),
  Object.freeze({ kind: 'done', hadToolCalls: true, wroteSteering: true }),
]

/**
 * Writes the step's one `assistant/message` anchor. Marked first: an anchor
 * the log refuses is never written again (not even as an interrupted one).
 * `decidedBy` names the checkpoint whose listener handed `message` back: the
 * log's data check refusing it is that listener's bug (`INVALID_DECISION`,
 * nothing committed), and the caller writes the empty anchor a failed
 * `agent/step-result` gets instead.
 */
export function writeAnchor(
  host: TurnHost,
  step: StepState,
  message: AssistantMessage,
  usage: TokenUsage | undefined,
  finishReason: FinishReason,
  interrupted = false,
  built = false,
  decidedBy?: string,
): void {
  step.anchored = true
  // A new exact-size array: the log keeps the anchor for the session's life.
  const chunkSeqs = step.chunkSeqs.toArray()
  // Literals rather than spreads (an object spread is a real copy in the cold round's unoptimized code); the keys
  // keep their order: turn, step, message, chunkSeqs, usage, finishReason, interrupted.
  const data = usage
    ? { turn: step.turn, step: step.step, message, chunkSeqs, usage, finishReason }
    : { turn: step.turn, step: step.step, message, chunkSeqs, finishReason }
  // Built (`appendBuilt`) only when the message is the loop's own assembly of admitted chunks.
  const anchor = interrupted ? { ...data, interrupted: true as const } : data
  if (built) host.appendBuilt('assistant/message', anchor)
  else if (decidedBy !== undefined) host.appendDecided(decidedBy, 'assistant/message', anchor)
  else host.append('assistant/message', anchor)
  step.calls = toolCallsOf(message)
}

/**
 * After the batch (complete or drained): the calls' deferred contexts, then
 * the injections deferred so far, in that order. Once per step.
 */
export function settleResults(host: TurnHost, step: StepState): void {
  if (step.resultsDone) return
  step.resultsDone = true
  const contexts = step.batch?.contexts()
  if (contexts?.length) {
    for (const placed of contextMessages(contexts)) host.append('user/message', userMessageData(placed))
  }
  appendDeferred(host, step)
}

/** The steering checkpoint (R-IN-5): claims every pending steering item, in order, as `steering/message`s. */
function claimSteering(host: TurnHost, step: StepState): void {
  const inbox = host.inboxState
  if (!inbox.hasSteering) return
  for (const item of inbox.nextStep.slice()) {
    if (!inbox.dequeue(item)) continue
    for (const placed of placeInput(item.id, item.content, item.source, item.contexts, item.placement)) {
      host.append('steering/message', placed.envelope ? { message: placed.message, envelope: placed.envelope } : { message: placed.message })
    }
    step.wroteSteering = true
  }
}

/** Ends the deferral window and writes `step/end` (marked first: never written twice); the turn has no open step after it. */
export function finishStep(host: TurnHost, step: StepState): void {
  stopDeferring(host, step)
  step.ended = true
  // The step's `step/start` data, frozen by the log then: nothing more is built, frozen or kept for the end.
  host.appendBuilt('step/end', step.bounds)
  const open = host.openTurn
  if (open?.step === step) open.step = undefined
}
