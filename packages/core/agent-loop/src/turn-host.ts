import type { Agent, AgentError, AgentEventEmitter } from '@deepseek-ai/dsh-agent'
import type { Session, SessionEvent, SessionEventMap, SessionEventType } from '@deepseek-ai/dsh-session'
import type { Checkpoints } from './checkpoints'
import type { Context } from './cordis'
import type { BuiltLogWriter, FailureState } from './failure'
import type { InboxState } from './inbox'
import type { LoopEnvironment } from './loop-environment'
import type { RequestConfig } from './request-config'
import type { TurnState } from './turn-state'

/** The loop's services and settings a turn uses. */
export type TurnEnvironment = Pick<LoopEnvironment, 'llm' | 'systemPrompt' | 'tools' | 'maxParallelToolCalls' | 'durability'>

/** The part of the inbox a turn drives: its claim, the steering checkpoints, and what is left at its close. */
export type TurnInbox = Pick<
  InboxState,
  'claimTurn' | 'hasSteering' | 'nextStep' | 'dequeue' | 'discard' | 'discardSteering' | 'requeueSteering'
>

/**
 * What a turn needs from the agent that runs it: the seam between the turn
 * and step code (`turn.ts`, `step*.ts`, `turn-close.ts`) and the agent
 * (`agent.ts`), as `BatchTools` is the seam of a tool batch. The turn code
 * sees the agent only through this interface and never imports the agent
 * class; the agent implements it and calls `runTurn(this, trigger)`.
 *
 * Ownership. The host owns the agent's lifetime, its admission and its
 * drain: it runs one turn at a time, and only while the agent is started,
 * not disposing and not failed. The turn owns `openTurn` from before its
 * claim until just before its `turn/end` (the span in which the host's
 * `cancel`, `steer` and `inject` see an open turn) and writes to the log only
 * through `append`. The host reaches into the open turn for two things: a
 * cancel or dispose aborts `openTurn.holder`, and the agent's failure calls
 * `openTurn.fail` (the turn then unwinds to its close).
 *
 * The refused-write rule: `append` and `flush` fail the agent when the log
 * refuses (`APPEND_REFUSED`, `PERSISTENCE_FAILED`) and throw the agent's
 * failure (`failed.error`); the turn never writes a refused event again,
 * closes as far as the log accepts, and reports the failure with
 * `reportFailure`.
 */
export interface TurnHost extends BuiltLogWriter {
  /** The agent as plugins see it: the subject of every checkpoint, tool call and prompt assembly. */
  readonly agent: Agent
  /** The agent's session: each request's history is derived from it. */
  readonly session: Session
  readonly env: TurnEnvironment
  /** The agent's `agent/*` checkpoints (scope-filtered, skipped when nobody listens). */
  readonly checkpoints: Checkpoints
  /** The agent's notifications; the turn emits `agent/error` for its own failure. */
  readonly events: Pick<AgentEventEmitter, 'emit'>
  readonly inboxState: TurnInbox
  /** The request configuration and the last logged header. */
  readonly requests: RequestConfig
  /** The open turn: set and cleared by the turn (see the ownership rule above). */
  openTurn: TurnState | undefined
  /** The agent's failure, once the log refused a write or a flush. */
  readonly failed: Pick<FailureState, 'error'>
  /** Whether the agent is being disposed: dispose wins a turn's end reason, and leftover steering is not requeued. */
  readonly disposing: boolean
  readonly logger: Pick<ReturnType<Context['logger']>, 'warn'>

  /**
   * `ctx.sessions.flush(session)`; a rejection fails the agent
   * (`PERSISTENCE_FAILED`) and rejects with the agent's failure. `undefined`
   * when there is nothing to flush (`ctx.sessions.flushes` is false): the
   * caller goes on without waiting.
   */
  flush(): Promise<void> | undefined
  /**
   * The refused-write rule for a write the turn makes on the session itself
   * (the step's chunks, appended straight to `session.append`, one call level
   * less per chunk than `append`): fails the agent with `APPEND_REFUSED` for
   * the refused `type` and returns the agent's failure, for the caller to throw.
   */
  refused(type: string, error: unknown): AgentError
  /**
   * `append` for data a listener of checkpoint `event` handed back (a
   * pre-step message, a prompt-submit content, a step-result message). The
   * log's data check refusing it (`SessionError` `INVALID_EVENT`: nothing was
   * committed, the log and the loop still agree) is that plugin's bug: it
   * throws `INVALID_DECISION` naming `event`, an ordinary turn failure
   * (R-ERR-1), and the agent goes on. Any other refusal is the refused-write
   * rule (`append`).
   */
  appendDecided<K extends SessionEventType>(event: string, type: K, data: SessionEventMap[K]): SessionEvent<K>
  /**
   * Emits `agent/error (turn, step, failure)` for the agent's failure, once
   * for the agent's whole life; does nothing when the agent has not failed
   * or the failure was reported already.
   */
  reportFailure(turn: number, step: number | undefined): void
  /**
   * A terminal stop (R-LOOP-4): pending steering is discarded, and steering
   * admitted until `endTerminalWindow` is discarded as it arrives.
   */
  beginTerminalWindow(): void
  /** After the terminal turn's close and flush: steering is admitted again. */
  endTerminalWindow(): void
}
