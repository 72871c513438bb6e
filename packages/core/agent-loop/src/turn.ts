import type { AdditionalContext, AgentMessage, ContinuationDecision, PromptDecision, RequestErrorDecision } from '@deepseek-ai/dsh-agent'
import { createUserMessage, type AssembledResponse, type ContentBlock } from '@deepseek-ai/dsh-llm'
import type { TurnEndReason, TurnTrigger } from '@deepseek-ai/dsh-session'
import { TurnAborted, checkAborted } from './cancellation'
import { checkContinuation, checkPromptDecision } from './decision-checks'
import { appendEarly } from './injections'
import { placeInput } from './placement'
import { acceptStep } from './step-accept'
import { prepareStep, type PreparedStep } from './step-prepare'
import { streamStep } from './step-stream'
import { closeTurn } from './turn-close'
import type { TurnHost } from './turn-host'
import { TurnState, type Proposal, type ProposedEntry, type StepOutcome } from './turn-state'

const NO_STEERING: readonly AgentMessage[] = Object.freeze([])
const EMPTY_PROPOSAL: Proposal = Object.freeze({ entries: [], steering: NO_STEERING })
const REJECTED: StepOutcome = Object.freeze({ kind: 'rejected' })
/** The triggers of a drained turn, shared: `turn/start` keeps its trigger, frozen. */
const PROMPT: TurnTrigger = Object.freeze({ kind: 'prompt' })
const STEERING: TurnTrigger = Object.freeze({ kind: 'steering' })

/**
 * Runs one turn of `host`'s agent to its close (R-LOOP-1…5). Never throws: a failure
 * ends the turn (`turn/end{error}`, `agent/error`), never the loop; a refused
 * write or failed flush fails the agent (see `FailureState`) and closes the
 * turn as far as the log still accepts.
 *
 * Not an async function, and neither is the turn it drives: a turn with
 * nothing to wait for (no listener heard, a model and an adapter that answer
 * at once, nothing to flush) runs to its close in this call and returns
 * `undefined`; otherwise the returned promise settles once the turn closed.
 */
export function runTurn(host: TurnHost, trigger: 'prompt' | 'steering'): Promise<void> | undefined {
  const session = host.session
  // The turn counts as open from before its claim: a cancel or an inject() from a listener of the
  // claim's or of turn/start's publication applies to this turn (R-LOOP-1: claim and open in one
  // synchronous step, so a cancel never falls between them).
  const state = new TurnState(trigger === 'prompt' ? PROMPT : STEERING)
  host.openTurn = state
  let item: AgentMessage | undefined
  try {
    item = trigger === 'prompt' ? host.inboxState.claimTurn() : undefined
    if (trigger === 'prompt' && !item) {
      host.openTurn = undefined
      return undefined
    }
    state.turn = session.lastTurn + 1
    // Frozen here: its parts are a number and a shared frozen trigger, so the log's freeze would only walk them to
    // find that out (`appendBuilt` skips data that is frozen; the log keeps what it is given, frozen either way).
    host.appendBuilt('turn/start', Object.freeze({ turn: state.turn, trigger: state.trigger }))
  } catch (error) {
    // The log refused the claim or turn/start: no turn is open in the log, and the agent failed.
    host.openTurn = undefined
    if (error !== host.failed.error) return Promise.reject(error)
    host.reportFailure(session.lastTurn, undefined)
    return undefined
  }
  let driven: Promise<void> | undefined
  try {
    appendEarly(host, state)
    driven = driveTurn(host, state, item)
  } catch (error) {
    return closeAfter(host, state, error)
  }
  if (driven === undefined) return closeTurn(host, state)
  return closeLater(host, state, driven)
}

/*
 * Continuations of a phase that got a promise are made in small functions of
 * their own (`…Later`), never in the phase itself: a closure in a function
 * makes V8 allocate a context for the variables it captures on every call of
 * that function, taken branch or not (about 60 bytes per phase, a dozen
 * phases per step, while the step runs unoptimized), and keeps the rare path
 * out of the hot one's compiled code.
 */

/** The close of a turn whose drive had to wait. */
function closeLater(host: TurnHost, state: TurnState, driven: Promise<void>): Promise<void> {
  return driven.then(
    () => closeTurn(host, state),
    (error: unknown) => closeAfter(host, state, error),
  )
}

/** The close of a turn whose drive threw: a throw that is not the turn's cancellation is its failure. */
function closeAfter(host: TurnHost, state: TurnState, error: unknown): Promise<void> | undefined {
  if (!(error instanceof TurnAborted) && !state.holder.aborted) {
    state.failure = { error, step: state.step?.step }
  }
  return closeTurn(host, state)
}

/**
 * The turn between its `turn/start` and its close (R-LOOP-1, R-LOOP-4,
 * R-ERR-2): the prompt policy (a claimed ordinary item) or the pending
 * steering (a steering turn) proposes step 1's batch; each step runs, then a
 * failed step goes to recovery (`retry` opens a new step), a done step to
 * the continuation (`continue` opens the next step with the pending steering
 * and the continuation's reason; a terminal stop ends the turn; a natural
 * stop runs `agent/turn-stopping` and a last steering drain). Ends with
 * `state.end` decided, or throws to the turn's close.
 *
 * Written as phases that continue synchronously while nothing has to be
 * waited for; the first promise (a heard checkpoint, a model or a flush that
 * takes time) chains the rest of the turn on it, and the turn's cancellation
 * is checked after every wait. `undefined` when the turn ended synchronously.
 */
function driveTurn(host: TurnHost, state: TurnState, item: AgentMessage | undefined): Promise<void> | undefined {
  // A listener of the claim or of turn/start may have cancelled already: no policy runs for a dead turn.
  checkAborted(state.holder)
  if (!item) return steps(host, state, 1, proposeSteering(host))
  // Nobody listens to the prompt policy: the decision is the admitted item itself, made no object of.
  if (!host.checkpoints.heard('agent/prompt-submit')) return steps(host, state, 1, proposeItem(item, item.content, item.contexts, true))
  const decision = promptPolicy(host, state, item)
  if (decision instanceof Promise) return promptLater(host, state, item, decision)
  checkAborted(state.holder)
  return steps(host, state, 1, proposePrompt(state, item, decision))
}

function promptLater(host: TurnHost, state: TurnState, item: AgentMessage, decision: Promise<PromptDecision>): Promise<void> {
  return decision.then((settled) => {
    checkAborted(state.holder)
    return steps(host, state, 1, proposePrompt(state, item, settled))
  })
}

/** Step 1's batch from the prompt policy's decision; `undefined` (the turn ends `blocked`) for a block. */
function proposePrompt(state: TurnState, item: AgentMessage, decision: PromptDecision): Proposal | undefined {
  if (decision.kind === 'block') {
    state.end = { kind: 'blocked', reason: decision.reason }
    return undefined
  }
  // Only the admitted content itself may skip the log's check: a prompt-submit listener may hand back its own.
  const admitted = decision.content === item.content && decision.additionalContexts === item.contexts
  return proposeItem(item, decision.content, decision.additionalContexts, admitted)
}

/** Step 1's batch: the item's request placed with `content` and `contexts` (`admitted`: the item's own). */
function proposeItem(item: AgentMessage, content: readonly ContentBlock[], contexts: readonly AdditionalContext[], admitted: boolean): Proposal {
  const placed = placeInput(item.id, content, item.source, contexts, item.placement)
  // One placed message (a prompt without contexts, or with them as its prefix): a one-element literal, not a `push`
  // onto an empty list, which gets a backing store of 17 entries.
  if (placed.length === 1) return { entries: [{ placed: placed[0]!, type: 'user/message', admitted }], steering: NO_STEERING }
  const entries: ProposedEntry[] = []
  for (let i = 0; i < placed.length; i++) entries.push({ placed: placed[i]!, type: 'user/message', admitted })
  return { entries, steering: NO_STEERING }
}

/** Runs steps from `step` on while each proposes the next (`undefined`: the turn's end is decided). */
function steps(host: TurnHost, state: TurnState, step: number, proposal: Proposal | undefined): Promise<void> | undefined {
  while (proposal !== undefined) {
    // One step (R-LOOP-2): prepare (step-prepare.ts) → stream (step-stream.ts) → accept (step-accept.ts).
    const next = runStep(host, state, step, proposal)
    step++
    if (next instanceof Promise) return stepsLater(host, state, step, next)
    proposal = next
  }
  return undefined
}

function stepsLater(host: TurnHost, state: TurnState, step: number, next: Promise<Next>): Promise<void> {
  return new Promise<void>((resolve, reject) => awaitSteps(host, state, step, next, resolve, reject))
}

/**
 * The rest of a turn once a step had to wait: the same step loop, continued
 * by one callback made here, and settling the turn's one promise. Chaining
 * each waiting step's continuation on the one before (`then` returning the
 * next step's promise) would keep one promise per step alive until the turn
 * ends; here a turn holds one however many of its steps wait.
 */
function awaitSteps(host: TurnHost, state: TurnState, step: number, pending: Promise<Next>, resolve: () => void, reject: (error: unknown) => void): void {
  const onNext = (proposed: Next): void => {
    try {
      while (proposed !== undefined) {
        const next = runStep(host, state, step, proposed)
        step++
        if (next instanceof Promise) {
          next.then(onNext, reject)
          return
        }
        proposed = next
      }
      resolve()
    } catch (error) {
      reject(error)
    }
  }
  pending.then(onNext, reject)
}

type Next = Proposal | undefined

function runStep(host: TurnHost, state: TurnState, step: number, proposal: Proposal): Next | Promise<Next> {
  const prepared = prepareStep(host, state, step, proposal)
  if (prepared instanceof Promise) return streamLater(host, state, step, prepared)
  return stream(host, state, step, prepared)
}

function streamLater(host: TurnHost, state: TurnState, step: number, prepared: Promise<PreparedStep | undefined>): Promise<Next> {
  return prepared.then((ready) => stream(host, state, step, ready))
}

function stream(host: TurnHost, state: TurnState, step: number, prepared: PreparedStep | undefined): Next | Promise<Next> {
  if (!prepared) return afterStep(host, state, step, REJECTED)
  const response = streamStep(host, state, prepared)
  if (response instanceof Promise) return acceptLater(host, state, step, prepared, response)
  return accept(host, state, step, prepared, response)
}

function acceptLater(host: TurnHost, state: TurnState, step: number, prepared: PreparedStep, response: Promise<AssembledResponse>): Promise<Next> {
  return response.then((assembled) => accept(host, state, step, prepared, assembled))
}

function accept(host: TurnHost, state: TurnState, step: number, prepared: PreparedStep, response: AssembledResponse): Next | Promise<Next> {
  const accepted = acceptStep(host, state, prepared.step, response)
  if (accepted instanceof Promise) return afterStepLater(host, state, step, accepted)
  return afterStep(host, state, step, accepted)
}

function afterStepLater(host: TurnHost, state: TurnState, step: number, accepted: Promise<StepOutcome>): Promise<Next> {
  return accepted.then((outcome) => afterStep(host, state, step, outcome))
}

/** What follows a step: the end, a retry's new step (recovery), or the continuation's decision. */
function afterStep(host: TurnHost, state: TurnState, step: number, outcome: StepOutcome): Next | Promise<Next> {
  checkAborted(state.holder)
  if (outcome.kind === 'rejected') {
    state.end = { kind: 'stopped', by: 'pre-step' }
    return undefined
  }
  if (outcome.kind === 'failed') return recovered(host, state, step, outcome)
  if (state.priorFailures.length !== 0) state.priorFailures = []
  const decision = continuation(host, state, outcome.hadToolCalls || outcome.wroteSteering || host.inboxState.hasSteering)
  if (decision instanceof Promise) return decideLater(host, state, decision)
  return decide(host, state, decision)
}

/** A failed step: `agent/request-error` decides between a retry's new step and the turn's end. */
function recovered(host: TurnHost, state: TurnState, step: number, outcome: Extract<StepOutcome, { kind: 'failed' }>): Promise<Next> {
  return recover(host, state, step, outcome).then((decision) => {
    checkAborted(state.holder)
    if (decision?.kind === 'retry') {
      state.priorFailures = state.priorFailures.concat(outcome.failure)
      return proposeSteering(host)
    }
    state.failure = { error: outcome.error, step }
    state.end = { kind: 'error', failure: outcome.failure }
    return undefined
  })
}

function decideLater(host: TurnHost, state: TurnState, decision: Promise<ContinuationDecision>): Promise<Next> {
  return decision.then((settled) => decide(host, state, settled))
}

/** The continuation's decision: the next step's batch, or the turn's end (after `agent/turn-stopping` and a last steering drain). */
function decide(host: TurnHost, state: TurnState, decision: ContinuationDecision): Next | Promise<Next> {
  const holder = state.holder
  checkAborted(holder)
  if (decision.kind === 'continue') return proposeSteering(host, decision.reason)
  if (decision.terminal) {
    state.terminal = decision.by
    host.beginTerminalWindow()
    state.end = { kind: 'stopped', by: decision.by }
    return undefined
  }
  if (host.checkpoints.heard('agent/turn-stopping')) {
    const stopping = host.checkpoints.serial('agent/turn-stopping', [host.agent, state.turn, holder.signal])
    if (stopping instanceof Promise) return lastDrainLater(host, state, stopping)
    checkAborted(holder)
  }
  return lastDrain(host, state)
}

function lastDrainLater(host: TurnHost, state: TurnState, stopping: Promise<unknown>): Promise<Next> {
  return stopping.then(() => {
    checkAborted(state.holder)
    return lastDrain(host, state)
  })
}

/** A natural stop: steering that arrived meanwhile opens one more step, else the turn completed. */
function lastDrain(host: TurnHost, state: TurnState): Next {
  if (host.inboxState.hasSteering) return proposeSteering(host)
  state.end = COMPLETED
  return undefined
}

/** The end of a completed turn, shared (the log freezes what it keeps; this is frozen already). */
const COMPLETED: TurnEndReason = Object.freeze({ kind: 'completed' })

/**
 * The prompt policy waterfall for a claimed ordinary item (R-IN-2), checked;
 * run only when heard (with no listener the turn proposes the admitted item
 * itself, validated and frozen at admission: see `driveTurn`).
 */
function promptPolicy(host: TurnHost, state: TurnState, item: AgentMessage): PromptDecision | Promise<PromptDecision> {
  const allow: PromptDecision = { kind: 'allow', content: item.content, additionalContexts: item.contexts }
  const decision = host.checkpoints.waterfall('agent/prompt-submit', [host.agent, item.content, item.source, state.holder.signal], () => allow)
  return decision instanceof Promise ? decision.then(checkPromptDecision) : checkPromptDecision(decision)
}

/** The pending steering as the next step's proposed batch (not yet claimed). */
function proposeSteering(host: TurnHost, reason?: string): Proposal {
  if (!reason && !host.inboxState.hasSteering) return EMPTY_PROPOSAL
  const steering = host.inboxState.nextStep.slice()
  const entries: ProposedEntry[] = []
  for (let i = 0; i < steering.length; i++) {
    const message = steering[i]!
    const placed = placeInput(message.id, message.content, message.source, message.contexts, message.placement)
    for (let j = 0; j < placed.length; j++) entries.push({ placed: placed[j]!, type: 'steering/message', item: message.id })
  }
  if (reason) {
    entries.push({
      placed: { message: createUserMessage(reason, { source: { kind: 'plugin', plugin: 'turn-continuation' } }) },
      type: 'steering/message',
    })
  }
  return entries.length ? { entries, steering } : EMPTY_PROPOSAL
}

/** `agent/request-error` after a failed step closed: the live error, the provider's facts and the prior failures (frozen). */
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

const CONTINUE: ContinuationDecision = Object.freeze({ kind: 'continue' })
const STOP: ContinuationDecision = Object.freeze({ kind: 'stop', by: 'default' })

/**
 * `agent/turn-continuation` over the default decision (`continue` when `more`),
 * checked; synchronous when nobody listens, and then the default itself.
 */
function continuation(host: TurnHost, state: TurnState, more: boolean): ContinuationDecision | Promise<ContinuationDecision> {
  return host.checkpoints.heard('agent/turn-continuation') ? heardContinuation(host, state, more) : more ? CONTINUE : STOP
}

/** `agent/turn-continuation` dispatched (its closure made here: no context per call of `continuation`). */
function heardContinuation(host: TurnHost, state: TurnState, more: boolean): ContinuationDecision | Promise<ContinuationDecision> {
  // Listeners get a fresh default of their own.
  const fallback: ContinuationDecision = more ? { kind: 'continue' } : { kind: 'stop', by: 'default' }
  const decision = host.checkpoints.waterfall('agent/turn-continuation', [host.agent, state.turn, fallback, state.holder.signal], () => fallback)
  return decision instanceof Promise ? decision.then(checkContinuation) : checkContinuation(decision)
}
