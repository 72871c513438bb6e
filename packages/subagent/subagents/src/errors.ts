/** The codes of `SubagentsError` (thrown by `spawn()`), and of a failed run's `error.code` where noted. */
export interface SubagentsErrorCodeMap {
  /** `spawn()` was given a malformed spec (no parent agent, an empty prompt or description). */
  INVALID_SPAWN: true
  /** The spec names an agent type the config does not have (the message lists the known ones). */
  UNKNOWN_AGENT_TYPE: true
  /** The child would be deeper than `maxDepth` (a subagent of a subagent of …). */
  DEPTH_LIMIT: true
  /** The parent is not a live agent of this app (it was disposed). */
  PARENT_GONE: true
  /** The config is invalid (two agent types of one name, a default type that does not exist). */
  INVALID_CONFIG: true
  /** A run's error: the child's turn failed without a provider failure code of its own. */
  SUBAGENT_FAILED: true
  /** A run's error: the run was cancelled before the child answered. */
  CANCELLED: true
}

export type SubagentsErrorCode = keyof SubagentsErrorCodeMap

/** An error of dsh-subagents: a `code` and a message a person (or the parent model) can act on. */
export class SubagentsError extends Error {
  override readonly name = 'SubagentsError'
  constructor(
    readonly code: SubagentsErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}
