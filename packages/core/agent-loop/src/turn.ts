import {
  type AgentMessage,
  type ContinuationDecision,
  type PreStepDecision,
  type PromptDecision,
  type RequestErrorDecision,
} from '@deepseek-ai/dsh-agent'
import {
  createAssembler,
  createAssistantMessage,
  createUserMessage,
  toLlmFailure,
  toolCallsOf,
  LlmError,
  type AssistantMessage,
  type FinishReason,
  type LlmFailure,
  type TokenUsage,
} from '@deepseek-ai/dsh-llm'
import type { TurnEndReason } from '@deepseek-ai/dsh-session'
import { TurnAborted, checkAborted } from './cancellation'
import { checkAssistant, checkContinuation, checkEntered, checkPromptDecision, pluginBug } from './decision-checks'
import { failureReason } from './failure'
import { appendDeferred, appendEarly, stopDeferring } from './injections'
import { contextMessages, placeInput, userMessageData } from './placement'
import { ToolBatch } from './tool-batch'
import type { TurnHost } from './turn-host'
import { StepState, TurnState, type Proposal, type ProposedEntry, type StepOutcome } from './turn-state'

const EMPTY_PROPOSAL: Proposal = Object.freeze({ entries: [], steering: [] })

/**
 * Runs one turn of `host`'s agent to its close (R-LOOP-1…5). Never throws: a failure
 * ends the turn (`turn/end{error}`, `agent/error`), never the loop; a refused
 * write or failed flush fails the agent (see `FailureState`) and closes the
 * turn as far as the log still accepts.
 */
export async function runTurn(host: TurnHost, trigger: 'prompt' | 'steering'): Promise<void> {
  const session = host.session
  // The turn counts as open from before its claim: a cancel or an inject() from a listener of the
  // claim's or of turn/start's publication applies to this turn (R-LOOP-1: claim and open in one
  // synchronous step, so a cancel never falls between them).
  const state = new TurnState({ kind: trigger })
  host.openTurn = state
  let item: AgentMessage | undefined
  try {
    item = trigger === 'prompt' ? host.inboxState.claimTurn() : undefined
    if (trigger === 'prompt' && !item) {
      host.openTurn = undefined
      return
    }
    state.turn = session.position.lastTurn + 1
    host.append('turn/start', { turn: state.turn, trigger: state.trigger })
  } catch (error) {
    // The log refused the claim or turn/start: no turn is open in the log, and the agent failed.
    host.openTurn = undefined
    if (error !== host.failed.error) throw error
    host.reportFailure(session.position.lastTurn, undefined)
    return
  }
  try {
    appendEarly(host, state)
    await driveTurn(host, state, item)
  } catch (error) {
    if (!(error instanceof TurnAborted) && !state.holder.aborted) {
      state.failure = { error, step: state.step?.step }
    }
  }
  await closeTurn(host, state)
}

async function driveTurn(host: TurnHost, state: TurnState, item: AgentMessage | undefined): Promise<void> {
  const { holder } = state
  let proposal: Proposal
  // A listener of the claim or of turn/start may have cancelled already: no policy runs for a dead turn.
  checkAborted(holder)
  if (item) {
    const decision = await promptPolicy(host, state, item)
    checkAborted(holder)
    if (decision.kind === 'block') {
      state.end = { kind: 'blocked', reason: decision.reason }
      return
    }
    proposal = {
      entries: placeInput(item.id, decision.content, item.source, decision.additionalContexts, item.placement).map((placed) => ({
        placed,
        type: 'user/message' as const,
      })),
      steering: [],
    }
  } else {
    proposal = proposeSteering(host)
  }

  for (let step = 1; ; step++) {
    const outcome = await runStep(host, state, step, proposal)
    checkAborted(holder)
    if (outcome.kind === 'rejected') {
      state.end = { kind: 'stopped', by: 'pre-step' }
      return
    }
    if (outcome.kind === 'failed') {
      const decision = await recover(host, state, step, outcome)
      checkAborted(holder)
      if (decision?.kind === 'retry') {
        state.priorFailures.push(outcome.failure)
        proposal = proposeSteering(host)
        continue
      }
      state.failure = { error: outcome.error, step }
      state.end = { kind: 'error', failure: outcome.failure }
      return
    }
    state.priorFailures.length = 0

    const fallback: ContinuationDecision =
      outcome.hadToolCalls || outcome.wroteSteering || host.inboxState.hasSteering
        ? { kind: 'continue' }
        : { kind: 'stop', by: 'default' }
    const decision = await continuation(host, state, fallback)
    checkAborted(holder)
    if (decision.kind === 'continue') {
      proposal = proposeSteering(host, decision.reason)
      continue
    }
    if (decision.terminal) {
      state.terminal = decision.by
      host.beginTerminalWindow()
      state.end = { kind: 'stopped', by: decision.by }
      return
    }
    await host.checkpoints.serial('agent/turn-stopping', [host.agent, state.turn, holder.signal])
    checkAborted(holder)
    if (host.inboxState.hasSteering) {
      proposal = proposeSteering(host)
      continue
    }
    state.end = { kind: 'completed' }
    return
  }
}

/** The prompt policy waterfall for a claimed ordinary item (R-IN-2). */
async function promptPolicy(host: TurnHost, state: TurnState, item: AgentMessage): Promise<PromptDecision> {
  const allow: PromptDecision = { kind: 'allow', content: item.content, additionalContexts: item.contexts }
  const decision = await host.checkpoints.waterfall('agent/prompt-submit', [host.agent, item.content, item.source, state.holder.signal], () => allow)
  return checkPromptDecision(decision)
}

/** The pending steering as the next step's proposed batch (not yet claimed). */
function proposeSteering(host: TurnHost, reason?: string): Proposal {
  const steering = host.inboxState.nextStep.slice()
  const entries: ProposedEntry[] = []
  for (const message of steering) {
    for (const placed of placeInput(message.id, message.content, message.source, message.contexts, message.placement)) {
      entries.push({ placed, type: 'steering/message', item: message.id })
    }
  }
  if (reason) {
    entries.push({
      placed: { message: createUserMessage(reason, { source: { kind: 'plugin', plugin: 'turn-continuation' } }) },
      type: 'steering/message',
    })
  }
  return entries.length ? { entries, steering } : EMPTY_PROPOSAL
}

async function runStep(host: TurnHost, state: TurnState, step: number, proposal: Proposal): Promise<StepOutcome> {
  const { session, env } = host
  const { holder } = state
  const { turn } = state
  const proposed = proposal.entries.map((entry) => entry.placed.message)
  const decision: PreStepDecision | void = await host.checkpoints.serial('agent/pre-step', [host.agent, turn, step, proposed, holder.signal])
  checkAborted(holder)
  if (decision && decision.kind === 'reject') {
    host.inboxState.discard(proposal.steering)
    return { kind: 'rejected' }
  }
  if (decision && decision.kind !== 'enter') throw pluginBug('agent/pre-step', 'must return { kind: "enter" | "reject" } or nothing')
  const entered = decision ? checkEntered(decision.messages) : proposed

  // Open the step (its state first: an inject() from a listener of step/start is deferred) and
  // enter the batch. Steering a cancel discarded meanwhile is not written.
  const current = new StepState(turn, step)
  state.step = current
  host.append('step/start', { turn, step })
  current.logged = true
  const dropped = new Set<string>()
  for (const message of proposal.steering) if (!host.inboxState.dequeue(message)) dropped.add(message.id)
  for (const message of entered) {
    const entry = proposal.entries.find((candidate) => candidate.placed.message === message)
    if (!entry) host.append('user/message', { message })
    else if (!(entry.type === 'steering/message' && dropped.has(entry.item ?? ''))) {
      host.append(entry.type, entry.placed.envelope ? { message, envelope: entry.placed.envelope } : { message })
    }
  }

  // The request: config, system prompt and tools, prepared call, header.
  const messages = session.deriveMessages()
  const requests = host.requests
  const requested = await requests.request(host.agent, turn, step, holder.signal)
  checkAborted(holder)
  const config = requests.settle(requested)
  const context = await env.systemPrompt.assembleContextFor(host.agent, requests.promptVars(config.provider, config.model))
  checkAborted(holder)
  const prepared = await requests.prepareCall(config, holder.signal)
  checkAborted(holder)
  requests.logHeader(prepared.config, context.system, context.tools)
  // Durability before the request (durability 'step'): the batch and the header, everything the
  // request derives from, are on disk before it leaves: one grouped fsync per step.
  if (env.durability === 'step') {
    await host.flush()
    checkAborted(holder)
  }
  const source = { kind: 'model' as const, provider: prepared.config.provider, model: prepared.config.model }
  current.source = source
  const request = Object.freeze({
    ...prepared.config,
    system: context.system,
    tools: context.tools,
    messages,
    sessionId: session.id,
  })
  env.llm.markLoopRequest(request, {
    sessionId: session.id,
    turn,
    step,
    lastSeq: session.events.length - 1,
    messageCount: messages.length,
  })

  // Stream, logging every chunk as it arrives.
  const assembler = createAssembler()
  current.assembler = assembler
  const stream = prepared.stream({ system: context.system, tools: context.tools, messages, signal: holder.signal, sessionId: session.id })
  const signal = holder.signal
  for await (const chunk of stream) {
    if (signal.aborted) break
    current.chunkSeqs.push(host.append('assistant/chunk', { turn, step, chunk }).seq)
    assembler.push(chunk)
  }
  checkAborted(holder)
  const result = assembler.result()

  if (result.finishReason.kind === 'error' || result.finishReason.kind === 'aborted') {
    // A failed provider call still writes its one anchor, with empty content.
    writeAnchor(host, current, createAssistantMessage([], { source }), result.usage, result.finishReason)
    finishStep(host, current)
    const failure = result.finishReason.failure ?? { code: 'ABORTED' as const, message: 'the provider aborted the call' }
    return { kind: 'failed', error: new LlmError(failure), failure }
  }

  const assembled = createAssistantMessage(result.content, { source })
  let message: AssistantMessage
  try {
    message = await host.checkpoints.waterfall('agent/step-result', [host.agent, turn, step, assembled, holder.signal], () => assembled)
    checkAssistant(message)
  } catch (error) {
    // Under a cancel the step closes as a cancel does (an interrupted anchor keeps what arrived).
    if (!(error instanceof TurnAborted) && !holder.aborted) {
      writeAnchor(host, current, createAssistantMessage([], { source, id: assembled.id }), result.usage, result.finishReason)
    }
    throw error
  }
  checkAborted(holder)
  writeAnchor(host, current, message, result.usage, result.finishReason)

  if (current.calls.length) {
    current.batch = new ToolBatch(current.calls, host, env.tools, host.agent, turn, step, env.maxParallelToolCalls, holder.signal)
    await current.batch.run()
    checkAborted(holder)
  }
  settleResults(host, current)

  // The steering checkpoint: claim everything pending, in order.
  if (host.inboxState.hasSteering) for (const item of host.inboxState.nextStep.slice()) {
    if (!host.inboxState.dequeue(item)) continue
    for (const placed of placeInput(item.id, item.content, item.source, item.contexts, item.placement)) {
      host.append('steering/message', placed.envelope ? { message: placed.message, envelope: placed.envelope } : { message: placed.message })
    }
    current.wroteSteering = true
  }
  stopDeferring(host, current)

  await host.checkpoints.serial('agent/post-step', [host.agent, turn, step, holder.signal])
  checkAborted(holder)
  finishStep(host, current)
  return { kind: 'done', hadToolCalls: current.calls.length > 0, wroteSteering: current.wroteSteering }
}

function writeAnchor(
  host: TurnHost,
  step: StepState,
  message: AssistantMessage,
  usage: TokenUsage | undefined,
  finishReason: FinishReason,
  interrupted = false,
): void {
  // Marked first: an anchor the log refuses is never written again (not even as an interrupted one).
  step.anchored = true
  host.append('assistant/message', {
    turn: step.turn,
    step: step.step,
    message,
    chunkSeqs: step.chunkSeqs,
    ...(usage ? { usage } : {}),
    finishReason,
    ...(interrupted ? { interrupted: true as const } : {}),
  })
  step.calls = toolCallsOf(message)
}

/**
 * After the batch (complete or drained): the calls' deferred contexts, then
 * the injections deferred so far, in that order.
 */
function settleResults(host: TurnHost, step: StepState): void {
  if (step.resultsDone) return
  step.resultsDone = true
  if (step.batch) {
    for (const placed of contextMessages(step.batch.contexts())) host.append('user/message', userMessageData(placed))
  }
  appendDeferred(host, step)
}

function finishStep(host: TurnHost, step: StepState): void {
  stopDeferring(host, step)
  step.ended = true
  host.append('step/end', { turn: step.turn, step: step.step })
  const open = host.openTurn
  if (open?.step === step) open.step = undefined
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
    step.batch ??= new ToolBatch(step.calls, host, host.env.tools, host.agent, step.turn, step.step, 1, state.holder.signal)
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

async function recover(
  host: TurnHost,
  state: TurnState,
  step: number,
  outcome: Extract<StepOutcome, { kind: 'failed' }>,
): Promise<RequestErrorDecision> {
  const prior = Object.freeze(state.priorFailures.slice())
  return host.checkpoints.waterfall(
    'agent/request-error',
    [host.agent, state.turn, step, outcome.error, outcome.failure, prior, state.holder.signal],
    () => undefined,
  )
}

async function continuation(host: TurnHost, state: TurnState, fallback: ContinuationDecision): Promise<ContinuationDecision> {
  const decision = await host.checkpoints.waterfall('agent/turn-continuation', [host.agent, state.turn, fallback, state.holder.signal], () => fallback)
  return checkContinuation(decision)
}

/**
 * Closes the turn: the interrupted step if one is open, leftover steering
 * (requeued, or discarded by a terminal stop), the end reason (dispose wins,
 * then a terminal stop, then cancel, then failure), holder retired,
 * `turn/end`, then the durability checkpoint.
 */
async function closeTurn(host: TurnHost, state: TurnState): Promise<void> {
  const step = state.step
  // A step the log never opened, or whose step/end was written or refused, is not closed again.
  if (step && step.logged && !step.ended) {
    try {
      await closeInterruptedStep(host, state, step)
    } catch (error) {
      if (!host.failed.error) state.failure ??= { error, step: step.step }
    }
  }
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
    host.append('turn/end', { turn: state.turn, reason })
  } catch (error) {
    // Refused (the agent failed): the turn stays open in the log, as far as it accepted.
    if (error !== host.failed.error) throw error
  }
  // The turn's own failure first (a plugin's, a provider's), then the agent's, each once.
  if (state.failure && (reason.kind === 'error' || host.failed.error)) {
    host.events.emit('agent/error', state.turn, state.failure.step, state.failure.error)
  }
  host.reportFailure(state.turn, state.failedStep)
  try {
    await host.flush()
  } catch {
    // The flush failed the agent (PERSISTENCE_FAILED): reported here unless the agent's failure was reported already.
    host.reportFailure(state.turn, undefined)
  }
  if (state.terminal !== undefined) host.endTerminalWindow()
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
