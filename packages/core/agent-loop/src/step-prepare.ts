import type { PreStepDecision } from '@deepseek-ai/dsh-agent'
import type { PreparedCall, StreamRequest, UserMessage } from '@deepseek-ai/dsh-llm'
import { checkAborted } from './cancellation'
import { checkEntered, pluginBug } from './decision-checks'
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
 */
export async function prepareStep(host: TurnHost, state: TurnState, step: number, proposal: Proposal): Promise<PreparedStep | undefined> {
  const { session, env } = host
  const { holder, turn } = state
  // Dispatched and awaited only when someone listens: with no listener the batch is entered as proposed.
  let decision: PreStepDecision | void | Promise<PreStepDecision | void> = undefined
  if (host.checkpoints.heard('agent/pre-step')) {
    decision = host.checkpoints.serial('agent/pre-step', [host.agent, turn, step, proposedMessages(proposal), holder.signal])
    if (decision instanceof Promise) decision = await decision
    checkAborted(holder)
  }
  if (decision && decision.kind === 'reject') {
    host.inboxState.discard(proposal.steering)
    return undefined
  }
  if (decision && decision.kind !== 'enter') throw pluginBug('agent/pre-step', 'must return { kind: "enter" | "reject" } or nothing')
  const current = enterBatch(host, state, step, proposal, decision ? checkEntered(decision.messages) : undefined)

  // The request: config, system prompt and tools, prepared call, header.
  const messages = session.deriveMessages()
  const requests = host.requests
  let requested = requests.request(host.agent, turn, step, holder.signal)
  if (requested instanceof Promise) requested = await requested
  checkAborted(holder)
  const config = requests.settle(requested)
  // Awaited only when a system-prompt/assemble listener made it a promise (the cached render otherwise).
  let context = env.systemPrompt.contextFor(host.agent, requests.promptVars(config.provider, config.model))
  if (context instanceof Promise) {
    context = await context
    checkAborted(holder)
  }
  const call = await requests.prepareCall(config, holder.signal)
  checkAborted(holder)
  requests.logHeader(call.config, context.system, context.tools)
  const flushed = env.durability === 'step' ? host.flush() : undefined
  if (flushed) {
    await flushed
    checkAborted(holder)
  }
  current.source = { kind: 'model', provider: call.config.provider, model: call.config.model }
  const request = Object.freeze({
    ...call.config,
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
  return {
    step: current,
    call,
    request: { system: context.system, tools: context.tools, messages, signal: holder.signal, sessionId: session.id },
  }
}

/** The proposed batch's messages (one shared empty array for an empty batch). */
function proposedMessages(proposal: Proposal): readonly UserMessage[] {
  const entries = proposal.entries
  if (entries.length === 0) return NO_MESSAGES
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
  host.appendBuilt('step/start', { turn, step })
  current.logged = true
  let dropped: Set<string> | undefined
  for (const message of proposal.steering) if (!host.inboxState.dequeue(message)) (dropped ??= new Set()).add(message.id)
  const entries = proposal.entries
  if (entered === undefined) {
    for (let i = 0; i < entries.length; i++) enterProposed(host, entries[i]!, dropped)
    return current
  }
  for (const message of entered) {
    let entry: ProposedEntry | undefined
    for (let i = 0; i < entries.length && !entry; i++) if (entries[i]!.placed.message === message) entry = entries[i]
    if (!entry) host.append('user/message', { message })
    else enterProposed(host, entry, dropped)
  }
  return current
}

/** Writes one proposed message with its own event type and envelope, unless it is steering a cancel discarded. */
function enterProposed(host: TurnHost, entry: ProposedEntry, dropped: Set<string> | undefined): void {
  if (entry.type === 'steering/message' && dropped?.has(entry.item ?? '')) return
  const { message, envelope } = entry.placed
  const data = envelope ? { message, envelope } : { message }
  // An admitted item as placed by the loop (admitted content, a deep-frozen message) is appended as built;
  // a prompt-submit listener's content and a continuation's reason (a plugin's string) are checked.
  if (entry.admitted === true || entry.item !== undefined) host.appendBuilt(entry.type, data)
  else host.append(entry.type, data)
}
