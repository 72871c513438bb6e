import type { AgentMessage, ContinuationDecision, PromptDecision, RequestErrorDecision } from '@deepseek-ai/dsh-agent'
import { createUserMessage } from '@deepseek-ai/dsh-llm'
import { TurnAborted, checkAborted } from './cancellation'
import { checkContinuation, checkPromptDecision } from './decision-checks'
import { appendEarly } from './injections'
import { placeInput } from './placement'
import { acceptStep } from './step-accept'
import { prepareStep } from './step-prepare'
import { streamStep } from './step-stream'
import { closeTurn } from './turn-close'
import type { TurnHost } from './turn-host'
import { TurnState, type Proposal, type ProposedEntry, type StepOutcome } from './turn-state'

const NO_STEERING: readonly AgentMessage[] = Object.freeze([])
const EMPTY_PROPOSAL: Proposal = Object.freeze({ entries: [], steering: NO_STEERING })
const REJECTED: StepOutcome = Object.freeze({ kind: 'rejected' })

/**
 * Runs one turn of `host`'s agent to its close (R-LOOP-1…5). Never throws: a failure
 * ends the turn (`turn/end{error}`, `agent/error`), never the loop; a refused
 * write or failed flush fails the agent (see `FailureState`) and closes the
 * turn as far as the log still accepts.
 */
export function runTurn(host: TurnHost, trigger: 'prompt' | 'steering'): Promise<void> {
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
      return NOTHING
    }
    state.turn = session.position.lastTurn + 1
    host.appendBuilt('turn/start', { turn: state.turn, trigger: state.trigger })
  } catch (error) {
    // The log refused the claim or turn/start: no turn is open in the log, and the agent failed.
    host.openTurn = undefined
    if (error !== host.failed.error) return Promise.reject(error)
    host.reportFailure(session.position.lastTurn, undefined)
    return NOTHING
  }
  // Not an async function: the turn's one promise is the close chained on driveTurn's (one promise less per turn).
  let driven: Promise<void>
  try {
    appendEarly(host, state)
    driven = driveTurn(host, state, item)
  } catch (error) {
    driven = Promise.reject(error)
  }
  return driven.then(
    () => closeTurn(host, state),
    (error: unknown) => {
      if (!(error instanceof TurnAborted) && !state.holder.aborted) {
        state.failure = { error, step: state.step?.step }
      }
      return closeTurn(host, state)
    },
  )
}

const NOTHING: Promise<void> = Promise.resolve()

/**
 * The turn between its `turn/start` and its close (R-LOOP-1, R-LOOP-4,
 * R-ERR-2): the prompt policy (a claimed ordinary item) or the pending
 * steering (a steering turn) proposes step 1's batch; each step runs, then a
 * failed step goes to recovery (`retry` opens a new step), a done step to
 * the continuation (`continue` opens the next step with the pending steering
 * and the continuation's reason; a terminal stop ends the turn; a natural
 * stop runs `agent/turn-stopping` and a last steering drain). Returns with
 * `state.end` decided, or throws to the turn's close.
 */
async function driveTurn(host: TurnHost, state: TurnState, item: AgentMessage | undefined): Promise<void> {
  const { holder } = state
  let proposal: Proposal
  // A listener of the claim or of turn/start may have cancelled already: no policy runs for a dead turn.
  checkAborted(holder)
  if (item) {
    let decision = promptPolicy(host, state, item)
    if (decision instanceof Promise) decision = await decision
    checkAborted(holder)
    if (decision.kind === 'block') {
      state.end = { kind: 'blocked', reason: decision.reason }
      return
    }
    // Only the admitted content itself may skip the log's check: a prompt-submit listener may hand back its own.
    const admitted = decision.content === item.content && decision.additionalContexts === item.contexts
    const placed = placeInput(item.id, decision.content, item.source, decision.additionalContexts, item.placement)
    const entries: ProposedEntry[] = []
    for (let i = 0; i < placed.length; i++) entries.push({ placed: placed[i]!, type: 'user/message', admitted })
    proposal = { entries, steering: NO_STEERING }
  } else {
    proposal = proposeSteering(host)
  }

  for (let step = 1; ; step++) {
    // One step (R-LOOP-2): prepare (step-prepare.ts) → stream (step-stream.ts) → accept (step-accept.ts).
    let prepared = prepareStep(host, state, step, proposal)
    if (prepared instanceof Promise) prepared = await prepared
    let outcome: StepOutcome = REJECTED
    if (prepared) {
      let response = streamStep(host, state, prepared)
      if (response instanceof Promise) response = await response
      const accepted = acceptStep(host, state, prepared.step, response)
      outcome = accepted instanceof Promise ? await accepted : accepted
    }
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

    let decision = continuation(host, state, outcome.hadToolCalls || outcome.wroteSteering || host.inboxState.hasSteering)
    if (decision instanceof Promise) decision = await decision
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
    if (host.checkpoints.heard('agent/turn-stopping')) {
      const stopping = host.checkpoints.serial('agent/turn-stopping', [host.agent, state.turn, holder.signal])
      if (stopping instanceof Promise) await stopping
      checkAborted(holder)
    }
    if (host.inboxState.hasSteering) {
      proposal = proposeSteering(host)
      continue
    }
    state.end = { kind: 'completed' }
    return
  }
}

/**
 * The prompt policy waterfall for a claimed ordinary item (R-IN-2), checked.
 * Synchronous when nobody listens: the turn awaits only a real dispatch. With
 * no listener the decision is the admitted item itself, validated and frozen
 * at admission, so it is not checked again.
 */
function promptPolicy(host: TurnHost, state: TurnState, item: AgentMessage): PromptDecision | Promise<PromptDecision> {
  const allow: PromptDecision = { kind: 'allow', content: item.content, additionalContexts: item.contexts }
  if (!host.checkpoints.heard('agent/prompt-submit')) return allow
  const decision = host.checkpoints.waterfall('agent/prompt-submit', [host.agent, item.content, item.source, state.holder.signal], () => allow)
  return decision instanceof Promise ? decision.then(checkPromptDecision) : checkPromptDecision(decision)
}

/** The pending steering as the next step's proposed batch (not yet claimed). */
function proposeSteering(host: TurnHost, reason?: string): Proposal {
  if (!reason && !host.inboxState.hasSteering) return EMPTY_PROPOSAL
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
  if (!host.checkpoints.heard('agent/turn-continuation')) return more ? CONTINUE : STOP
  // Listeners get a fresh default of their own.
  const fallback: ContinuationDecision = more ? { kind: 'continue' } : { kind: 'stop', by: 'default' }
  const decision = host.checkpoints.waterfall('agent/turn-continuation', [host.agent, state.turn, fallback, state.holder.signal], () => fallback)
  return decision instanceof Promise ? decision.then(checkContinuation) : checkContinuation(decision)
}
