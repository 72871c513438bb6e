import {
  AgentError,
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
  contentProblem,
  toLlmFailure,
  toolCallsOf,
  LlmError,
  type Assembler,
  type AssistantMessage,
  type FinishReason,
  type LlmCallConfig,
  type LlmFailure,
  type ToolCallBlock,
  type TokenUsage,
  type UserMessage,
} from '@deepseek-ai/dsh-llm'
import type { SessionEventMap, TurnEndReason, TurnTrigger } from '@deepseek-ai/dsh-session'
import { TurnAborted, TurnHolder, checkAborted } from './cancellation'
import { failureReason, persistenceFailed } from './failure'
import { contextMessages, placeInput, userMessageData, type PlacedMessage } from './placement'
import type { ReactLoopAgent } from './agent'
import { ToolBatch } from './tool-batch'

/** One message of a step's proposed batch, with the event type it keeps if entered as is. */
interface ProposedEntry {
  readonly placed: PlacedMessage
  readonly type: 'user/message' | 'steering/message'
  /** The inbox item the message comes from, for steering. */
  readonly item?: string
}

/** The batch `agent/pre-step` decides on, and the inbox items it would consume. */
interface Proposal {
  readonly entries: readonly ProposedEntry[]
  readonly steering: readonly AgentMessage[]
}

const EMPTY_PROPOSAL: Proposal = Object.freeze({ entries: [], steering: [] })

/** How a step went, for the turn to decide what comes next. */
type StepOutcome =
  | { kind: 'rejected' }
  | { kind: 'done'; hadToolCalls: boolean; wroteSteering: boolean }
  | { kind: 'failed'; error: unknown; failure: LlmFailure }

/**
 * The open step. `defersInjections` is true from `step/start` until the
 * steering checkpoint is written: an `inject()` in that window waits for the
 * end of the batch (and of the checkpoint), so the history never shows the
 * model a message it had not seen when it answered, and never splits a
 * steering item from its context.
 */
export class StepState {
  defersInjections = true
  readonly deferred: PlacedMessage[] = []
  assembler: Assembler | undefined
  readonly chunkSeqs: number[] = []
  /** The log accepted `step/start`: the step exists in the log and must be closed there. */
  logged = false
  /** The anchor was written, or refused: in either case it is never written again. */
  anchored = false
  /** `step/end` was written, or refused: in either case it is never written again. */
  ended = false
  calls: readonly ToolCallBlock[] = []
  /** The route that answers this step, once the call is prepared. */
  source: { kind: 'model'; provider: string; model: string } | undefined
  batch: ToolBatch | undefined
  resultsDone = false
  wroteSteering = false

  constructor(
    readonly turn: number,
    readonly step: number,
  ) {}
}

/** The open turn. */
export class TurnState {
  readonly holder = new TurnHolder()
  /** Assigned when `turn/start` is written. */
  turn = 0
  /** Injections admitted before `turn/start` was written; appended right after it. */
  private early: PlacedMessage[] | undefined = []
  step: StepState | undefined
  /** The decided end, when the turn ends other than by cancel or failure. */
  end: TurnEndReason | undefined
  /** A terminal continuation stop: authoritative through close and flush. */
  terminal: string | undefined
  failure: { error: unknown; step: number | undefined } | undefined
  /** Consecutive provider failures of this turn (cleared by a success). */
  readonly priorFailures: LlmFailure[] = []
  /** The step that was open when the agent failed, for `agent/error`. */
  failedStep: number | undefined

  constructor(readonly trigger: TurnTrigger) {}

  /** The agent failed while this turn was open: it unwinds to its close, which ends it `error` and reports. */
  fail(error: Error): void {
    this.failedStep = this.step?.step
    this.holder.fail(error)
  }

  /** Whether `turn/start` is not written yet: an injection must wait for it. */
  get opening(): boolean {
    return this.early !== undefined
  }

  /** Holds an injection admitted while the turn is opening. */
  holdInjection(placed: PlacedMessage): void {
    this.early!.push(placed)
  }

  /** Called once `turn/start` is logged: appends the injections that waited for it, in order. */
  opened(agent: ReactLoopAgent): void {
    const early = this.early!
    this.early = undefined
    for (const placed of early) agent.append('user/message', userMessageData(placed))
  }
}

/** The last request header written to the log, folded: its fields, with the tools kept as serialized. */
export interface HeaderState extends Omit<SessionEventMap['request/header'], 'tools' | 'reason'> {
  tools: readonly unknown[]
  toolsJson: string
}

/**
 * Runs one turn of `agent` to its close (R-LOOP-1…5). Never throws: a failure
 * ends the turn (`turn/end{error}`, `agent/error`), never the loop; a refused
 * write or failed flush fails the agent (see `FailureState`) and closes the
 * turn as far as the log still accepts.
 */
export async function runTurn(agent: ReactLoopAgent, trigger: 'prompt' | 'steering'): Promise<void> {
  const session = agent.session
  // The turn counts as open from before its claim: a cancel or an inject() from a listener of the
  // claim's or of turn/start's publication applies to this turn (R-LOOP-1: claim and open in one
  // synchronous step, so a cancel never falls between them).
  const state = new TurnState({ kind: trigger })
  agent.openTurn = state
  let item: AgentMessage | undefined
  try {
    item = trigger === 'prompt' ? agent.inboxState.claimTurn() : undefined
    if (trigger === 'prompt' && !item) {
      agent.openTurn = undefined
      return
    }
    state.turn = session.position.lastTurn + 1
    agent.append('turn/start', { turn: state.turn, trigger: state.trigger })
  } catch (error) {
    // The log refused the claim or turn/start: no turn is open in the log, and the agent failed.
    agent.openTurn = undefined
    if (error !== agent.failed.error) throw error
    agent.reportOutsideTurn()
    return
  }
  try {
    state.opened(agent)
    await driveTurn(agent, state, item)
  } catch (error) {
    if (!(error instanceof TurnAborted) && !state.holder.aborted) {
      state.failure = { error, step: state.step?.step }
    }
  }
  await closeTurn(agent, state)
}

async function driveTurn(agent: ReactLoopAgent, state: TurnState, item: AgentMessage | undefined): Promise<void> {
  const { holder } = state
  let proposal: Proposal
  // A listener of the claim or of turn/start may have cancelled already: no policy runs for a dead turn.
  checkAborted(holder)
  if (item) {
    const decision = await promptPolicy(agent, state, item)
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
    proposal = proposeSteering(agent)
  }

  for (let step = 1; ; step++) {
    const outcome = await runStep(agent, state, step, proposal)
    checkAborted(holder)
    if (outcome.kind === 'rejected') {
      state.end = { kind: 'stopped', by: 'pre-step' }
      return
    }
    if (outcome.kind === 'failed') {
      const decision = await recover(agent, state, step, outcome)
      checkAborted(holder)
      if (decision?.kind === 'retry') {
        state.priorFailures.push(outcome.failure)
        proposal = proposeSteering(agent)
        continue
      }
      state.failure = { error: outcome.error, step }
      state.end = { kind: 'error', failure: outcome.failure }
      return
    }
    state.priorFailures.length = 0

    const fallback: ContinuationDecision =
      outcome.hadToolCalls || outcome.wroteSteering || agent.inboxState.hasSteering
        ? { kind: 'continue' }
        : { kind: 'stop', by: 'default' }
    const decision = await continuation(agent, state, fallback)
    checkAborted(holder)
    if (decision.kind === 'continue') {
      proposal = proposeSteering(agent, decision.reason)
      continue
    }
    if (decision.terminal) {
      state.terminal = decision.by
      agent.beginTerminalWindow()
      state.end = { kind: 'stopped', by: decision.by }
      return
    }
    await agent.checkpoints.serial('agent/turn-stopping', [agent, state.turn, holder.signal])
    checkAborted(holder)
    if (agent.inboxState.hasSteering) {
      proposal = proposeSteering(agent)
      continue
    }
    state.end = { kind: 'completed' }
    return
  }
}

/** The prompt policy waterfall for a claimed ordinary item (R-IN-2). */
async function promptPolicy(agent: ReactLoopAgent, state: TurnState, item: AgentMessage): Promise<PromptDecision> {
  const allow: PromptDecision = { kind: 'allow', content: item.content, additionalContexts: item.contexts }
  const decision = await agent.checkpoints.waterfall('agent/prompt-submit', [agent, item.content, item.source, state.holder.signal], () => allow)
  if (decision?.kind === 'block') {
    if (typeof decision.reason !== 'string') throw pluginBug('agent/prompt-submit', 'a block decision needs a reason string')
    return decision
  }
  if (decision?.kind !== 'allow') throw pluginBug('agent/prompt-submit', 'must return { kind: "allow" | "block" }')
  const problem = contentProblem(decision.content, 'agent/prompt-submit content')
  if (problem) throw pluginBug('agent/prompt-submit', problem)
  if (!Array.isArray(decision.additionalContexts)) throw pluginBug('agent/prompt-submit', 'additionalContexts must be an array')
  for (const [i, context] of decision.additionalContexts.entries()) {
    if (context === null || typeof context !== 'object' || typeof context.label !== 'string') {
      throw pluginBug('agent/prompt-submit', `additionalContexts[${i}] must be { label, content }`)
    }
    const contextProblem = contentProblem(context.content, `additionalContexts[${i}].content`)
    if (contextProblem) throw pluginBug('agent/prompt-submit', contextProblem)
  }
  return decision
}

/** The pending steering as the next step's proposed batch (not yet claimed). */
function proposeSteering(agent: ReactLoopAgent, reason?: string): Proposal {
  const steering = agent.inboxState.nextStep.slice()
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

async function runStep(agent: ReactLoopAgent, state: TurnState, step: number, proposal: Proposal): Promise<StepOutcome> {
  const { session, env } = agent
  const { holder } = state
  const { turn } = state
  const proposed = proposal.entries.map((entry) => entry.placed.message)
  const decision: PreStepDecision | void = await agent.checkpoints.serial('agent/pre-step', [agent, turn, step, proposed, holder.signal])
  checkAborted(holder)
  if (decision && decision.kind === 'reject') {
    agent.inboxState.discard(proposal.steering)
    return { kind: 'rejected' }
  }
  if (decision && decision.kind !== 'enter') throw pluginBug('agent/pre-step', 'must return { kind: "enter" | "reject" } or nothing')
  const entered = decision ? checkEntered(decision.messages) : proposed

  // Open the step (its state first: an inject() from a listener of step/start is deferred) and
  // enter the batch. Steering a cancel discarded meanwhile is not written.
  const current = new StepState(turn, step)
  state.step = current
  agent.append('step/start', { turn, step })
  current.logged = true
  const dropped = new Set<string>()
  for (const message of proposal.steering) if (!agent.inboxState.dequeue(message)) dropped.add(message.id)
  for (const message of entered) {
    const entry = proposal.entries.find((candidate) => candidate.placed.message === message)
    if (!entry) agent.append('user/message', { message })
    else if (!(entry.type === 'steering/message' && dropped.has(entry.item ?? ''))) {
      agent.append(entry.type, entry.placed.envelope ? { message, envelope: entry.placed.envelope } : { message })
    }
  }

  // The request: config, system prompt and tools, prepared call, header.
  const messages = session.deriveMessages()
  const base: LlmCallConfig = agent.baseConfig()
  const requested = await agent.checkpoints.waterfall('agent/request', [agent, turn, step, base, holder.signal], () => base)
  checkAborted(holder)
  checkConfig(requested)
  const config = agent.restoreEffort(requested)
  if (!config.provider || !config.model) {
    throw new AgentError(
      'NO_MODEL',
      'no provider/model for this request: pass agentOptions.provider and .model, or mount @deepseek-ai/dsh-agent-default-model with a default',
    )
  }
  const context = await env.systemPrompt.assembleContextFor(agent, agent.promptVars(config.provider, config.model))
  checkAborted(holder)
  const prepared = await env.llm.prepareCall(config, holder.signal)
  checkAborted(holder)
  agent.logHeader(prepared.config, context.system, context.tools)
  // Durability before the request (durability 'step'): the batch and the header, everything the
  // request derives from, are on disk before it leaves: one grouped fsync per step.
  if (env.durability === 'step') {
    await agent.flushBeforeRequest()
    checkAborted(holder)
  }
  const source = { kind: 'model' as const, provider: prepared.config.provider, model: prepared.config.model }
  current.source = source
  const request = Object.freeze({
    ...prepared.config,
    system: context.system,
    tools: context.tools,
    messages,
    sessionId: agent.id,
  })
  env.llm.markLoopRequest(request, {
    sessionId: agent.id,
    turn,
    step,
    lastSeq: session.events.length - 1,
    messageCount: messages.length,
  })

  // Stream, logging every chunk as it arrives.
  const assembler = createAssembler()
  current.assembler = assembler
  const stream = prepared.stream({ system: context.system, tools: context.tools, messages, signal: holder.signal, sessionId: agent.id })
  const signal = holder.signal
  for await (const chunk of stream) {
    if (signal.aborted) break
    current.chunkSeqs.push(agent.append('assistant/chunk', { turn, step, chunk }).seq)
    assembler.push(chunk)
  }
  checkAborted(holder)
  const result = assembler.result()

  if (result.finishReason.kind === 'error' || result.finishReason.kind === 'aborted') {
    // A failed provider call still writes its one anchor, with empty content.
    writeAnchor(agent, current, createAssistantMessage([], { source }), result.usage, result.finishReason)
    finishStep(agent, current)
    const failure = result.finishReason.failure ?? { code: 'ABORTED' as const, message: 'the provider aborted the call' }
    return { kind: 'failed', error: new LlmError(failure), failure }
  }

  const assembled = createAssistantMessage(result.content, { source })
  let message: AssistantMessage
  try {
    message = await agent.checkpoints.waterfall('agent/step-result', [agent, turn, step, assembled, holder.signal], () => assembled)
    checkAssistant(message)
  } catch (error) {
    // Under a cancel the step closes as a cancel does (an interrupted anchor keeps what arrived).
    if (!(error instanceof TurnAborted) && !holder.aborted) {
      writeAnchor(agent, current, createAssistantMessage([], { source, id: assembled.id }), result.usage, result.finishReason)
    }
    throw error
  }
  checkAborted(holder)
  writeAnchor(agent, current, message, result.usage, result.finishReason)

  if (current.calls.length) {
    current.batch = new ToolBatch(current.calls, agent, env.tools, agent, turn, step, env.maxParallelToolCalls, holder.signal)
    await current.batch.run()
    checkAborted(holder)
  }
  settleResults(agent, current)

  // The steering checkpoint: claim everything pending, in order.
  if (agent.inboxState.hasSteering) for (const item of agent.inboxState.nextStep.slice()) {
    if (!agent.inboxState.dequeue(item)) continue
    for (const placed of placeInput(item.id, item.content, item.source, item.contexts, item.placement)) {
      agent.append('steering/message', placed.envelope ? { message: placed.message, envelope: placed.envelope } : { message: placed.message })
    }
    current.wroteSteering = true
  }
  stopDeferring(agent, current)

  await agent.checkpoints.serial('agent/post-step', [agent, turn, step, holder.signal])
  checkAborted(holder)
  finishStep(agent, current)
  return { kind: 'done', hadToolCalls: current.calls.length > 0, wroteSteering: current.wroteSteering }
}

function writeAnchor(
  agent: ReactLoopAgent,
  step: StepState,
  message: AssistantMessage,
  usage: TokenUsage | undefined,
  finishReason: FinishReason,
  interrupted = false,
): void {
  // Marked first: an anchor the log refuses is never written again (not even as an interrupted one).
  step.anchored = true
  agent.append('assistant/message', {
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
function settleResults(agent: ReactLoopAgent, step: StepState): void {
  if (step.resultsDone) return
  step.resultsDone = true
  if (step.batch) {
    for (const placed of contextMessages(step.batch.contexts())) agent.append('user/message', userMessageData(placed))
  }
  appendDeferred(agent, step)
}

/** Appends the deferred injections, including any injected while they are being appended. */
function appendDeferred(agent: ReactLoopAgent, step: StepState): void {
  while (step.deferred.length) agent.append('user/message', userMessageData(step.deferred.shift()!))
}

/** Ends the deferral window: what waited is appended, and from here on an `inject()` is appended directly. */
function stopDeferring(agent: ReactLoopAgent, step: StepState): void {
  if (!step.defersInjections) return
  appendDeferred(agent, step)
  step.defersInjections = false
}

function finishStep(agent: ReactLoopAgent, step: StepState): void {
  stopDeferring(agent, step)
  step.ended = true
  agent.append('step/end', { turn: step.turn, step: step.step })
  const open = agent.openTurn
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
async function closeInterruptedStep(agent: ReactLoopAgent, state: TurnState, step: StepState): Promise<void> {
  await tolerant(agent, () => {
    if (!step.anchored && step.assembler && step.source) {
      const source = step.source
      const result = step.assembler.count ? step.assembler.result() : undefined
      writeAnchor(agent, step, createAssistantMessage(step.assembler.partial(), { source }), result?.usage, { kind: 'aborted' }, true)
    }
  })
  if (step.calls.length) {
    step.batch ??= new ToolBatch(step.calls, agent, agent.env.tools, agent, step.turn, step.step, 1, state.holder.signal)
    const batch = step.batch
    await tolerant(agent, () => batch.finishAborted())
  }
  await tolerant(agent, () => settleResults(agent, step))
  await tolerant(agent, () => stopDeferring(agent, step))
  if (state.holder.aborted && !state.failure && !agent.failed.error) {
    try {
      await agent.checkpoints.serial('agent/post-step', [agent, step.turn, step.step, state.holder.signal])
    } catch (error) {
      agent.logger.warn(error)
    }
  }
  finishStep(agent, step)
}

/** Runs one part of a close; once the agent failed, a refusal (or any throw) there does not stop the close. */
async function tolerant(agent: ReactLoopAgent, part: () => void | Promise<void>): Promise<void> {
  try {
    await part()
  } catch (error) {
    if (!agent.failed.error) throw error
  }
}

async function recover(
  agent: ReactLoopAgent,
  state: TurnState,
  step: number,
  outcome: Extract<StepOutcome, { kind: 'failed' }>,
): Promise<RequestErrorDecision> {
  const prior = Object.freeze(state.priorFailures.slice())
  return agent.checkpoints.waterfall(
    'agent/request-error',
    [agent, state.turn, step, outcome.error, outcome.failure, prior, state.holder.signal],
    () => undefined,
  )
}

async function continuation(agent: ReactLoopAgent, state: TurnState, fallback: ContinuationDecision): Promise<ContinuationDecision> {
  const decision = await agent.checkpoints.waterfall('agent/turn-continuation', [agent, state.turn, fallback, state.holder.signal], () => fallback)
  if (decision?.kind === 'continue') return decision
  if (decision?.kind === 'stop' && typeof decision.by === 'string' && decision.by) return decision
  throw pluginBug('agent/turn-continuation', 'must return { kind: "continue" } or { kind: "stop", by }')
}

/**
 * Closes the turn: the interrupted step if one is open, leftover steering
 * (requeued, or discarded by a terminal stop), the end reason (dispose wins,
 * then a terminal stop, then cancel, then failure), holder retired,
 * `turn/end`, then the durability checkpoint.
 */
async function closeTurn(agent: ReactLoopAgent, state: TurnState): Promise<void> {
  const step = state.step
  // A step the log never opened, or whose step/end was written or refused, is not closed again.
  if (step && step.logged && !step.ended) {
    try {
      await closeInterruptedStep(agent, state, step)
    } catch (error) {
      if (!agent.failed.error) state.failure ??= { error, step: step.step }
    }
  }
  try {
    if (state.terminal !== undefined) agent.inboxState.discardSteering()
    // A failed agent leaves leftover steering pending in the log, for a resume.
    else if (agent.inboxState.hasSteering && !agent.disposing && !agent.failed.error) agent.inboxState.requeueSteering()
  } catch (error) {
    if (!agent.failed.error) throw error
  }
  // Decided after the steering moved: a cancel from one of those events' listeners still counts.
  const reason = endReason(agent, state)
  agent.openTurn = undefined
  try {
    agent.append('turn/end', { turn: state.turn, reason })
  } catch (error) {
    // Refused (the agent failed): the turn stays open in the log, as far as it accepted.
    if (error !== agent.failed.error) throw error
  }
  // The turn's own failure first (a plugin's, a provider's), then the agent's, each once.
  if (state.failure && (reason.kind === 'error' || agent.failed.error)) {
    agent.events.emit('agent/error', state.turn, state.failure.step, state.failure.error)
  }
  agent.reportFailure(state.turn, state.failedStep)
  try {
    await agent.env.sessions.flush(agent.session)
  } catch (error) {
    agent.fail(persistenceFailed(agent.id, error))
    agent.reportFailure(state.turn, undefined)
  }
  if (state.terminal !== undefined) agent.endTerminalWindow()
}

function endReason(agent: ReactLoopAgent, state: TurnState): TurnEndReason {
  // The agent's failure wins: the log must say the turn did not end normally.
  const failure = agent.failed.error
  if (failure) return failureReason(failure)
  if (agent.disposing) return { kind: 'aborted' }
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

function pluginBug(event: string, problem: string): AgentError {
  return new AgentError('INVALID_DECISION', `${event}: a listener returned a malformed value (${problem})`)
}

function checkConfig(config: unknown): asserts config is LlmCallConfig {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) throw pluginBug('agent/request', 'must return a call config object')
  const c = config as Record<string, unknown>
  for (const key of ['provider', 'model', 'reasoningEffort'] as const) {
    if (c[key] !== undefined && typeof c[key] !== 'string') throw pluginBug('agent/request', `${key} must be a string`)
  }
  for (const key of ['maxTokens', 'temperature'] as const) {
    if (c[key] !== undefined && (typeof c[key] !== 'number' || !Number.isFinite(c[key]))) throw pluginBug('agent/request', `${key} must be a finite number`)
  }
}

function checkEntered(messages: unknown): readonly UserMessage[] {
  if (!Array.isArray(messages)) throw pluginBug('agent/pre-step', 'enter.messages must be an array')
  const ids = new Set<string>()
  for (const [i, message] of messages.entries()) {
    const id = (message as UserMessage | null)?.id
    if (ids.has(id!)) throw pluginBug('agent/pre-step', `enter.messages[${i}] repeats message id ${JSON.stringify(id)}`)
    ids.add(id!)
    if (message === null || typeof message !== 'object' || (message as UserMessage).role !== 'user' || typeof (message as UserMessage).id !== 'string') {
      throw pluginBug('agent/pre-step', `enter.messages[${i}] must be a user message with an id (createUserMessage)`)
    }
    // Checked here so that a plugin's malformed message fails the turn (INVALID_DECISION), not the log (APPEND_REFUSED).
    const source = (message as UserMessage).source as { kind?: unknown } | null | undefined
    if (source === null || typeof source !== 'object' || typeof source.kind !== 'string' || !source.kind) {
      throw pluginBug('agent/pre-step', `enter.messages[${i}].source must be a tagged source such as { kind: 'user' } (createUserMessage)`)
    }
    const problem = contentProblem((message as UserMessage).content, `enter.messages[${i}].content`)
    if (problem) throw pluginBug('agent/pre-step', problem)
  }
  return messages as UserMessage[]
}

function checkAssistant(message: AssistantMessage): void {
  if (message === null || typeof message !== 'object' || message.role !== 'assistant') {
    throw pluginBug('agent/step-result', 'must return an assistant message')
  }
  const problem = contentProblem(message.content, 'agent/step-result content')
  if (problem) throw pluginBug('agent/step-result', problem)
}
