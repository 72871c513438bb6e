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
