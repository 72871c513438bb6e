/** The codes of errors thrown or rejected by the JSONL persistence backend. */
export interface JsonlErrorCodeMap {
  /** The id cannot be used as a file name (see `isSafeSessionId`). */
  INVALID_SESSION_ID: true
  /** No session file exists for the id. */
  SESSION_NOT_FOUND: true
  /** A line in the middle of the file is not a valid event; the message names the file and line. */
  CORRUPT_SESSION: true
  /** A line holds an event type this process does not know and the writer did not mark ignorable (same code as dsh-session's). */
  UNKNOWN_TYPE: true
  /** The file was written in a newer format `version` than this package reads. */
  UNSUPPORTED_VERSION: true
  /** Another live writer (another process, or another writer in this process) holds the session. */
  SESSION_LOCKED: true
  /** A fresh session would overwrite a session file that already exists. */
  SESSION_EXISTS: true
  /** The file changed on disk between `load()` and the session going live. */
  SESSION_CHANGED: true
  /** `delete()` of a session that is live in this process. */
  SESSION_LIVE: true
  /** `append()` of events that do not continue the log (seq gap, missing `session/meta`). */
  INVALID_APPEND: true
  /** Writing or syncing the file failed; nothing after the last successful flush is durable. */
  WRITE_FAILED: true
}

export type JsonlErrorCode = keyof JsonlErrorCodeMap

/**
 * An error of the JSONL backend: a `code`, a message a person can act on, and
 * where known the `file` and the 1-based `line`. Messages never quote event
 * contents, so a corrupt line never leaks what the conversation held.
 */
export class JsonlPersistenceError extends Error {
  override readonly name = 'JsonlPersistenceError'
  readonly file?: string
  readonly line?: number

  constructor(
    readonly code: JsonlErrorCode,
    message: string,
    options: { file?: string; line?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    if (options.file !== undefined) this.file = options.file
    if (options.line !== undefined) this.line = options.line
  }
}

/** The `code` of a Node system error (`ENOENT`, `EEXIST`, …), if it is one. */
export function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
    ? (error as { code: string }).code
    : undefined
}
