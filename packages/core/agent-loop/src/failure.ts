import { AgentError } from '@deepseek-ai/dsh-agent'
import type { Session, SessionEvent, SessionEventMap, SessionEventType, TurnEndReason } from '@deepseek-ai/dsh-session'

/**
 * How the loop writes to an agent's log: `session.append` behind the
 * refused-write rule. A throw of the log fails the agent and comes back as the
 * agent's `APPEND_REFUSED` error; the refused event is never written again.
 */
export type LogWriter = Pick<Session, 'append'>

/**
 * A `LogWriter` that also appends data the loop built itself from values
 * already admitted and frozen (dsh-session's `appendBuilt`: no lossless-JSON
 * walk, no shape check; the structure check stays), under the same
 * refused-write rule. Only for data that no plugin or user handed in
 * unchecked.
 */
export interface BuiltLogWriter extends LogWriter {
  appendBuilt<K extends SessionEventType>(type: K, data: SessionEventMap[K]): SessionEvent<K>
}

/**
 * `append(type, data, 'checked')` writes the loop's occasional events (the
 * request header) through dsh-session's `appendChecked`: every check of `session.append`, entered
 * apart from the path the chunks take, under the same refused-write rule.
 */
export interface CheckedLogWriter {
  append<K extends SessionEventType>(type: K, data: SessionEventMap[K], how: 'checked'): SessionEvent<K>
}

/**
 * The refused-write rule, in one place. The first refused append or failed
 * flush *fails* the agent: the open turn unwinds and closes (`turn/end{error}`)
 * as far as the log still accepts, `agent/error` reports the failure once, the
 * agent goes idle, and every later admission and `runMaintenance` throws the
 * same code until the agent is disposed. Later failures are consequences of
 * the first and are not reported again.
 */
export class FailureState {
  private _error: AgentError | undefined
  private reported = false

  /** The agent's failure, once it failed. */
  get error(): AgentError | undefined {
    return this._error
  }

  /** Records `error` unless the agent failed already; returns the failure that stands. */
  record(error: AgentError): AgentError {
    return (this._error ??= error)
  }

  /**
   * Whether the failure still has to be reported with `agent/error`; the
   * first caller that gets `true` reports it.
   */
  claimReport(): boolean {
    if (!this._error || this.reported) return false
    this.reported = true
    return true
  }

  /** The error a later admission or `runMaintenance` throws: the failure's code and message, the failure as cause. */
  refusal(): AgentError | undefined {
    const error = this._error
    return error && new AgentError(error.code, error.message, { cause: error })
  }
}

/** The `turn/end` reason of a turn that the agent's failure ended. */
export function failureReason(failure: AgentError): TurnEndReason {
  return { kind: 'error', failure: { code: failure.code, message: failure.message } }
}

/** The failure for an append the log refused. */
export function appendRefused(agentId: string, type: string, cause: unknown): AgentError {
  return new AgentError(
    'APPEND_REFUSED',
    `the session log of agent ${agentId} refused ${type}: ${describe(cause)}. The agent takes no more work: dispose it, and resume the session to go on from what the log holds`,
    { cause },
  )
}

/** The failure for a write or flush of the log that did not complete. */
export function persistenceFailed(agentId: string, cause: unknown): AgentError {
  return new AgentError(
    'PERSISTENCE_FAILED',
    `the session log of agent ${agentId} could not be made durable: ${describe(cause)}. The agent takes no more work: fix the cause, dispose it, and resume the session to go on from what was saved`,
    { cause },
  )
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  return text.endsWith('.') ? text.slice(0, -1) : text
}
