/** The codes of `CompactionError` (and of `compaction/failed` events). */
export interface CompactionErrorCodeMap {
  /**
   * A model request did not fit the context window even after compaction,
   * or compaction could not shrink it: the message says how large it was.
   */
  CONTEXT_OVERFLOW: true
  /** The summary call failed (the provider's failure is in the message and `cause`). */
  SUMMARY_FAILED: true
  /** The agent was cancelled or disposed, or the caller's signal aborted, during the compaction. */
  ABORTED: true
  /** The process stopped between `compaction/start` and its outcome (written on resume). */
  INTERRUPTED: true
  /**
   * The summary came out no smaller than what it would replace, so nothing
   * was shadowed. Only a `compaction/failed` code: `compact()` resolves with
   * `{ kind: 'skipped', code: 'NOT_SMALLER' }` then, since nothing failed.
   */
  NOT_SMALLER: true
  /** The session log refused a compaction event; nothing was shadowed. */
  APPEND_REFUSED: true
  /** `compact()` was given something that is not an agent of this app, or malformed options. */
  INVALID_ARGUMENT: true
}

export type CompactionErrorCode = keyof CompactionErrorCodeMap

/** An error of dsh-compaction: a `code` and a message a person can act on. */
export class CompactionError extends Error {
  override readonly name = 'CompactionError'
  constructor(
    readonly code: CompactionErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}
