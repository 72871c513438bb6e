import type { LlmCallConfig, LlmRequest, Message, PreparedCall, SessionId, StreamRequest, UserMessage } from '@deepseek-ai/dsh-llm'
import type { AssembledContext } from '@deepseek-ai/dsh-system-prompt'
import { checkAborted } from './cancellation'
import { checkEntered, pluginBug } from './decision-checks'
import type { RoutedConfig } from './request-config'
import type { TurnHost } from './turn-host'
import { StepState, type Proposal, type ProposedEntry, type TurnState } from './turn-state'

/** A step whose request is ready to leave: what `streamStep` dispatches. */
export interface PreparedStep {
  readonly step: StepState
  /** The call bound to one adapter registration, for the whole step. */
  readonly call: PreparedCall
  readonly request: StreamRequest
}

/**
 * The first phase of a step (R-LOOP-2, R-LOOP-3): the step is opened and its
 * request assembled, in this order:
 *
 * 1. `agent/pre-step (proposed)`: `reject` opens no step, writes nothing of
 *    the batch, discards its steering items, and returns `undefined`;
 * 2. `step/start`, then the entered batch (`enterBatch`);
 * 3. the history, derived from the log;
 * 4. the call config (`request-config.ts`: `agent/request`, checks, restored
 *    effort, `NO_MODEL`), the system text and tools for the final route
 *    (`systemPrompt.contextFor`), `ctx.llm.prepareCall`, and
 *    `request/header` when anything in it changed;
 * 5. with durability `'step'`, a flush: everything the request derives from
 *    is on disk before it leaves (one grouped fsync per step);
 * 6. the frozen request is marked as the loop's (for the invariant companion).
 *
 * The request is the system text, the visible tool schemas and the derived
 * history (the frozen seed prefix included), nothing else. The turn's
 * cancellation is checked after each wait: a cancelled step unwinds
 * (`TurnAborted`) and the turn's close closes it.
 *
 * Not an async function: each phase below continues synchronously when the
 * one before it had nothing to wait for (no listener heard, an adapter that
 * answers at once, nothing to flush), so such a step is prepared with no
 * promise at all and the prepared step is returned as is; the first phase
 * that gets a promise chains the rest on it (the step then returns a
 * promise). A throw before any wait is thrown, after one it rejects.
 */
export function prepareStep(host: TurnHost, state: TurnState, step: number, proposal: Proposal): PreparedStep | undefined | Promise<PreparedStep | undefined> {
  // Dispatched and awaited only when someone listens: with no listener the batch is entered as proposed.
  if (host.checkpoints.heard('agent/pre-step')) return preStep(host, state, step, proposal)
  return enter(host, state, step, proposal, undefined)
}

/** `agent/pre-step (proposed)` and its decision, then the rest of the step. */
async function preStep(host: TurnHost, state: TurnState, step: number, proposal: Proposal): Promise<PreparedStep | undefined> {
  const { holder, turn } = state
  let decision = host.checkpoints.serial('agent/pre-step', [host.agent, turn, step, proposedMessages(proposal), holder.signal])
  if (decision instanceof Promise) decision = await decision
  checkAborted(holder)
  if (decision && decision.kind === 'reject') {
    host.inboxState.discard(proposal.steering)
    return undefined
  }
  if (decision && decision.kind !== 'enter') throw pluginBug('agent/pre-step', 'must return { kind: "enter" | "reject" } or nothing')
  return enter(host, state, step, proposal, decision ? checkEntered(decision.messages) : undefined)
}

/** Opens the step with its batch, derives the history and asks for the step's call config. */
function enter(
  host: TurnHost,
  state: TurnState,
  step: number,
  proposal: Proposal,
  entered: readonly UserMessage[] | undefined,
): PreparedStep | Promise<PreparedStep> {
  const current = enterBatch(host, state, step, proposal, entered)
  const messages = host.session.deriveMessages()
  const requested = host.requests.request(host.agent, state.turn, step, state.holder.signal)
  if (requested instanceof Promise) return configureLater(host, state, current, messages, requested)
  // Checked whether or not the request waited: a listener of the step's entries (step/start, the batch's
  // messages) may have cancelled, and a cancelled step assembles no system prompt and prepares no call.
  checkAborted(state.holder)
  return configure(host, state, current, messages, requested)
}

/*
 * Each phase's continuation after a wait is made in a `…Later` function of
 * its own: a closure in the phase would make V8 allocate a context for the
 * variables it captures on every call, waited or not (see `turn.ts`).
 */
function configureLater(host: TurnHost, state: TurnState, current: StepState, messages: readonly Message[], requested: Promise<LlmCallConfig>): Promise<PreparedStep> {
  return requested.then((config) => {
    checkAborted(state.holder)
    return configure(host, state, current, messages, config)
  })
}

/** Settles the call config and assembles the system text and tools for its route. */
function configure(
  host: TurnHost,
  state: TurnState,
  current: StepState,
  messages: readonly Message[],
  requested: LlmCallConfig,
): PreparedStep | Promise<PreparedStep> {
  const requests = host.requests
  const config = requests.settle(requested)
  // A promise only when a system-prompt/assemble listener made it one (the cached render otherwise).
  const context = host.env.systemPrompt.contextFor(host.agent, requests.promptVars(config.provider, config.model))
  if (context instanceof Promise) return bindLater(host, state, current, messages, config, context)
  return bind(host, state, current, messages, config, context)
}

function bindLater(
  host: TurnHost,
  state: TurnState,
  current: StepState,
  messages: readonly Message[],
  config: RoutedConfig,
  context: Promise<AssembledContext>,
): Promise<PreparedStep> {
  return context.then((assembled) => {
    checkAborted(state.holder)
    return bind(host, state, current, messages, config, assembled)
  })
}

/** Prepares the call: one adapter registration for the whole step. */
function bind(
  host: TurnHost,
  state: TurnState,
  current: StepState,
  messages: readonly Message[],
  config: RoutedConfig,
  context: AssembledContext,
): PreparedStep | Promise<PreparedStep> {
  const call = host.requests.prepareCall(config, state.holder.signal)
  if (call instanceof Promise) return sealLater(host, state, current, messages, call, context)
  return seal(host, state, current, messages, call, context)
}

function sealLater(
  host: TurnHost,
  state: TurnState,
  current: StepState,
  messages: readonly Message[],
  call: Promise<PreparedCall>,
  context: AssembledContext,
): Promise<PreparedStep> {
  return call.then((prepared) => {
    checkAborted(state.holder)
    return seal(host, state, current, messages, prepared, context)
  })
}

/** Logs the header when it changed and, with durability `'step'`, flushes; then the request. */
function seal(
  host: TurnHost,
  state: TurnState,
  current: StepState,
  messages: readonly Message[],
  call: PreparedCall,
  context: AssembledContext,
): PreparedStep | Promise<PreparedStep> {
  host.requests.logHeader(call.config, context.system, context.tools)
  const flushed = host.env.durability === 'step' ? host.flush() : undefined
  if (flushed) return finishLater(host, state, current, messages, call, context, flushed)
  return finish(host, state, current, messages, call, context)
}

function finishLater(
  host: TurnHost,
  state: TurnState,
  current: StepState,
  messages: readonly Message[],
  call: PreparedCall,
  context: AssembledContext,
  flushed: Promise<void>,
): Promise<PreparedStep> {
  return flushed.then(() => {
    checkAborted(state.holder)
    return finish(host, state, current, messages, call, context)
  })
}

/** The frozen request, marked as the loop's, and what `streamStep` dispatches. */
function finish(
  host: TurnHost,
  state: TurnState,
  current: StepState,
  messages: readonly Message[],
  call: PreparedCall,
  context: AssembledContext,
): PreparedStep {
  const { session, env } = host
  const { holder, turn } = state
  const effective = call.config
  current.source = host.requests.modelSource(effective.provider, effective.model)
  env.llm.markLoopRequest(loopRequest(effective, context, messages, session.id), {
    sessionId: session.id,
    turn,
    step: current.step,
    // A field read: `events.length` goes through the log view's proxy.
    lastSeq: session.lastSeq,
    messageCount: messages.length,
  })
  return {
    step: current,
    call,
    request: { system: context.system, tools: context.tools, messages, signal: holder.signal, sessionId: session.id },
  }
}

/**
 * The frozen record of the request, as the invariant companion compares it
 * with the log: the effective config's fields, then the system text, tools,
 * messages and session. Built field by field (an object spread is a generic
 * copy while the step runs unoptimized); the config's optional fields only
 * when set, as the prepared call leaves them out of what the adapter gets.
 */
function loopRequest(effective: PreparedCall['config'], context: AssembledContext, messages: readonly Message[], sessionId: SessionId): LlmRequest {
  const request: LlmRequest = { provider: effective.provider, model: effective.model, system: context.system, tools: context.tools, messages, sessionId }
  if (effective.reasoningEffort !== undefined) request.reasoningEffort = effective.reasoningEffort
  if (effective.maxTokens !== undefined) request.maxTokens = effective.maxTokens
  if (effective.temperature !== undefined) request.temperature = effective.temperature
  return Object.freeze(request)
}

/** The proposed batch's messages (one shared empty array for an empty batch). */
function proposedMessages(proposal: Proposal): readonly UserMessage[] {
  const entries = proposal.entries
  if (entries.length === 0) return NO_MESSAGES
  // A one-element literal for the usual one-message batch (a `push` onto an empty list gets 17 entries).
  if (entries.length === 1) return [entries[0]!.placed.message]
  const messages: UserMessage[] = []
  for (let i = 0; i < entries.length; i++) messages.push(entries[i]!.placed.message)
  return messages
}

const NO_MESSAGES: readonly UserMessage[] = Object.freeze([])

/**
 * Opens the step and enters its batch: the step's state first (so an
 * `inject()` from a listener of `step/start` is deferred), `step/start`, the
 * claim of the batch's steering items, then each entered message
 * (`undefined`: the proposed batch as is). An entered message that is `===` a
 * proposed one keeps its event type and envelope; any other is a
 * `user/message`. Steering a cancel discarded meanwhile is not written.
 */
function enterBatch(host: TurnHost, state: TurnState, step: number, proposal: Proposal, entered: readonly UserMessage[] | undefined): StepState {
  const { turn } = state
  const current = new StepState(turn, step)
  state.step = current
  host.appendBuilt('step/start', current.bounds)
  current.logged = true
  let dropped: Set<string> | undefined
  // Indexed loops: `for…of` makes an iterator per loop while this runs unoptimized (every step).
  const steering = proposal.steering
  for (let i = 0; i < steering.length; i++) {
    const message = steering[i]!
    if (!host.inboxState.dequeue(message)) (dropped ??= new Set()).add(message.id)
  }
  const entries = proposal.entries
  if (entered === undefined) {
    for (let i = 0; i < entries.length; i++) enterProposed(host, entries[i]!, dropped)
    return current
  }
  for (const message of entered) {
    let entry: ProposedEntry | undefined
    for (let i = 0; i < entries.length && !entry; i++) if (entries[i]!.placed.message === message) entry = entries[i]
    // A message of the listener's own: checked by the log, and refused as the listener's bug.
    if (!entry) host.appendDecided('agent/pre-step', 'user/message', { message })
    else enterProposed(host, entry, dropped)
  }
  return current
}

/** Writes one proposed message with its own event type and envelope, unless it is steering a cancel discarded. */
function enterProposed(host: TurnHost, entry: ProposedEntry, dropped: Set<string> | undefined): void {
  if (entry.type === 'steering/message' && dropped?.has(entry.item ?? '')) return
  const { message, envelope } = entry.placed
  // An admitted item as placed by the loop (admitted content, a deep-frozen message) is appended as built;
  // a prompt-submit listener's content and a continuation's reason (a plugin's string) are checked.
  if (entry.admitted === true || entry.item !== undefined) {
    // The message is deep-frozen: `{ message }` is frozen whole here (nothing for the log to walk); an envelope
    // the placement built is frozen by the log.
    host.appendBuilt(entry.type, envelope ? { message, envelope } : Object.freeze({ message }))
  } else {
    // Content a prompt-submit listener handed back, or a continuation's reason: the log's refusal is that listener's bug.
    const event = entry.type === 'user/message' ? 'agent/prompt-submit' : 'agent/turn-continuation'
    host.appendDecided(event, entry.type, envelope ? { message, envelope } : { message })
  }
}
