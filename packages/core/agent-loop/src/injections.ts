import type { AgentError, ResolvedAgentInput } from '@deepseek-ai/dsh-agent'
import type { MessageId } from '@deepseek-ai/dsh-llm'
import type { Session } from '@deepseek-ai/dsh-session'
import { failureReason, type FailureState, type LogWriter } from './failure'
import { placeInput, userMessageData, type PlacedMessage } from './placement'
import { addPlaced, type StepState, type TurnState } from './turn-state'

/** What an injection is made of: `inject()` input, resolved (its contexts are always empty). */
export type InjectionInput = Pick<ResolvedAgentInput, 'content' | 'source' | 'placement' | 'metadata'>

/** What the router needs from the agent. */
export interface InjectionHost extends LogWriter {
  readonly session: Session
  /** The open turn (between its claim and just before `turn/end`). */
  readonly openTurn: TurnState | undefined
  /** Whether an injection with no open turn must wait: before `agent/session-start`, or while maintenance runs (exclusive with turns). */
  readonly holdsIdleInjections: boolean
  readonly disposing: boolean
  readonly failed: Pick<FailureState, 'error'>
  /** Starts a flush nobody awaits; `whenIdle()` and dispose wait for it, and a rejection fails the agent. */
  flushLater(): void
  /** Reports the agent's failure outside a turn (`agent/error`, once). */
  reportOutsideTurn(): void
}

/**
 * Where an `inject()` goes (R-IN-7): the whole rule, in one place.
 *
 * An injection bypasses both FIFOs and is written as a durable
 * `user/message` (carrying the input's `metadata` when it has any: it has no
 * `inbox/enqueue` to carry it). Where it lands depends on what is open:
 *
 * 1. a turn that is *opening* (claimed, `turn/start` not yet written): right
 *    after its `turn/start` (`appendEarly`);
 * 2. a *step* from `step/start` to its steering checkpoint: deferred to the end
 *    of the step's batch, after the calls' contexts (`appendDeferred`,
 *    `stopDeferring`), or drained by the close of an interrupted step, so the
 *    history never shows the model a message it had not seen when it
 *    answered;
 * 3. a turn *between steps*: appended at once;
 * 4. no open turn: written synchronously as a one-shot turn
 *    `turn/start{injection}` → `user/message`… → `turn/end{completed}` (no
 *    step, no model call), then flushed; injected while that turn is being
 *    written (from a listener), it joins that turn. Before
 *    `agent/session-start` or while maintenance runs, it is *held*, and the
 *    held injections are written as one one-shot turn once nothing holds them
 *    (`release`).
 *
 * A refused write fails the agent (the refused-write rule): the one-shot turn
 * still closes `error` if the log opened it, and `route` throws the failure.
 */
export class InjectionRouter {
  /** Injections waiting for `agent/session-start`, or for maintenance to settle. */
  private readonly held: PlacedMessage[] = []
  /** The injections of a one-shot turn being written. */
  private oneShot: PlacedMessage[] | undefined

  constructor(private readonly host: InjectionHost) {}

  /** Routes one admitted injection (see the class comment). Throws the agent's failure when the log refused it. */
  route(id: MessageId, input: InjectionInput): void {
    const [request] = placeInput(id, input.content, input.source, [], input.placement)
    const placed: PlacedMessage = Object.keys(input.metadata).length ? { ...request!, metadata: input.metadata } : request!
    const turn = this.host.openTurn
    if (turn) {
      if (turn.early) turn.early = addPlaced(turn.early, placed)
      else if (turn.step?.defersInjections) turn.step.deferred = addPlaced(turn.step.deferred, placed)
      else this.host.append('user/message', userMessageData(placed))
      return
    }
    if (this.oneShot) {
      // Injected from a listener while the one-shot turn is being written: it joins that turn.
      this.oneShot.push(placed)
      return
    }
    if (this.host.holdsIdleInjections) {
      this.held.push(placed)
      return
    }
    const failure = this.writeOneShot([placed])
    if (failure) throw failure
  }

  /**
   * Writes the held injections as one one-shot turn, if nothing holds them
   * now: the agent started, no maintenance runs, no turn is open or being
   * written, and the agent is not failed. While the agent is disposing only
   * `atDispose` writes them (the teardown, once the drain has settled and
   * while the session is still attached: they are durable context).
   */
  release(atDispose = false): void {
    const host = this.host
    if (!this.held.length || host.holdsIdleInjections || host.openTurn || this.oneShot || host.failed.error) return
    if (host.disposing && !atDispose) return
    this.writeOneShot(this.held.splice(0))
  }

  /**
   * Writes a one-shot `injection` turn holding `messages` (and any injected
   * while it is written), then flushes it. A refused write fails the agent:
   * the turn still closes (`error`) if the log opened it, the failure is
   * reported and returned (the admission that wrote it throws it).
   */
  private writeOneShot(messages: PlacedMessage[]): AgentError | undefined {
    const host = this.host
    const queue = (this.oneShot = messages)
    const number = host.session.lastTurn + 1
    let opened = false
    try {
      host.append('turn/start', { turn: number, trigger: { kind: 'injection' } })
      opened = true
      while (queue.length) host.append('user/message', userMessageData(queue.shift()!))
    } catch (error) {
      if (error !== host.failed.error) throw error
    } finally {
      this.oneShot = undefined
    }
    const failure = host.failed.error
    if (opened) {
      try {
        host.append('turn/end', { turn: number, reason: failure ? failureReason(failure) : { kind: 'completed' } })
      } catch {
        // Refused as well: the failure that stands is reported below.
      }
    }
    host.flushLater()
    if (!failure) return undefined
    host.reportOutsideTurn()
    return failure
  }
}

/** Once `turn/start` is logged: the turn stops holding injections, then appends those that waited for it, in order. */
export function appendEarly(log: LogWriter, turn: TurnState): void {
  const early = turn.early!
  turn.early = undefined
  for (let i = 0; i < early.length; i++) log.append('user/message', userMessageData(early[i]!))
}

/** Appends a step's deferred injections, including any injected while they are being appended. */
export function appendDeferred(log: LogWriter, step: StepState): void {
  while (step.deferred.length) log.append('user/message', userMessageData(step.deferred.shift()!))
}

/** Ends a step's deferral window: what waited is appended, and from here on an injection is appended directly. */
export function stopDeferring(log: LogWriter, step: StepState): void {
  if (!step.defersInjections) return
  appendDeferred(log, step)
  step.defersInjections = false
}
