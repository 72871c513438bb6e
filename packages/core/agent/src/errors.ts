/** The codes of errors thrown or rejected by `ctx.agents` and agents. */
export interface AgentErrorCodeMap {
  /** `create`/`resume` with no factory registered (mount dsh-agent-loop). */
  NO_FACTORY: true
  /** `resume` with no `ctx.sessionPersistence` mounted. */
  NO_PERSISTENCE: true
  /** `resume` of an id that has no persisted session. */
  SESSION_NOT_FOUND: true
  /** Admission refused malformed input; nothing was enqueued. */
  INVALID_INPUT: true
  /** No provider/model after `agent/request` (mount dsh-agent-default-model or pass agentOptions). */
  NO_MODEL: true
  /** The id is already taken by a live agent or session. */
  DUPLICATE_ID: true
  /** The agent (or its provider) is disposed, or being disposed. */
  DISPOSED: true
  /** Admission on an agent whose create transaction has not published it yet (setup must not drive it). */
  NOT_PUBLISHED: true
  /** A listener returned a malformed decision (the turn fails with this code). */
  INVALID_DECISION: true
  /** The call would wait for itself (e.g. `runMaintenance` from inside the agent's own turn). */
  WOULD_DEADLOCK: true
  /** The operation's signal aborted it. */
  ABORTED: true
  /** Options given to create/resume/config are contradictory or malformed. */
  INVALID_OPTIONS: true
  /**
   * A write or a flush of the agent's session log failed (disk full, permission,
   * I/O, a closed writer): `ctx.sessions.flush(session)` rejected. The agent is
   * failed: it is idle, and every later admission and `runMaintenance` throws
   * this code until it is disposed. What the log held at the last successful
   * flush is durable; resume the session to go on.
   */
  PERSISTENCE_FAILED: true
  /**
   * The session log refused an event the agent appended (`session.append()`
   * threw: an invalid structure such as two tool calls with one id, data that
   * is not lossless JSON). The refused event is never written again; the open
   * step and turn are closed as far as the log still accepts (`turn/end{error}`),
   * and the agent is failed as with `PERSISTENCE_FAILED`.
   */
  APPEND_REFUSED: true
}

export type AgentErrorCode = keyof AgentErrorCodeMap

/** An error of the agent layer: a `code` and a message a person can act on. */
export class AgentError extends Error {
  override readonly name = 'AgentError'
  constructor(
    readonly code: AgentErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}
