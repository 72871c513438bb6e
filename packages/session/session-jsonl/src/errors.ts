/** The codes of errors thrown or rejected by the JSONL persistence backend. */
export interface JsonlErrorCodeMap {
  /** The id cannot be used as a file name (see `isSafeSessionId`). */
  INVALID_SESSION_ID: true
  /** No session file exists for the id. */
  SESSION_NOT_FOUND: true
  /**
   * A complete line of the file is not a valid event (bad JSON, invalid UTF-8,
   * a wrong `seq`, …); the message names the file and line.
   */
  CORRUPT_SESSION: true
  /** A line holds an event type this process does not know and the writer did not mark ignorable (same code as dsh-session's). */
  UNKNOWN_TYPE: true
  /** The file was written in a newer format `version` than this package reads. */
  UNSUPPORTED_VERSION: true
  /** Another live writer (another process, or another writer in this process) holds the session. */
  SESSION_LOCKED: true
  /** A fresh session would overwrite a session file that already exists. */
  SESSION_EXISTS: true
  /** The file changed on disk between `load()` and the session going live, or while it was written (another program wrote to it or truncated it). */
  SESSION_CHANGED: true
  /** `delete()` of a session that is live in this process. */
  SESSION_LIVE: true
  /** `append()` of events that do not continue the log (seq gap, missing `session/meta`). */
  INVALID_APPEND: true
  /** The disk (or the user's quota) is full (`ENOSPC`, `EDQUOT`). */
  NO_SPACE: true
  /** The file system is mounted read-only (`EROFS`). */
  READ_ONLY: true
  /** The process may not read or write the path: its mode, its owner, or an immutable or append-only attribute (`EACCES`, `EPERM`). */
  PERMISSION_DENIED: true
  /** Something other than a regular file (a directory, a device, a FIFO) is where a session or lock file should be (`EISDIR`). */
  NOT_A_FILE: true
  /** The session directory, or one of its parents, is not a directory (`ENOTDIR`, or a file where the directory should be), or the configured directory is empty. */
  NOT_A_DIRECTORY: true
  /** Writing or syncing failed for another reason (an I/O error, …), the file was deleted while it was written, or an event could not be serialized; nothing after the last successful flush is durable. */
  WRITE_FAILED: true
  /** Reading failed for another reason (an I/O error, too many open files, …). */
  READ_FAILED: true
}

export type JsonlErrorCode = keyof JsonlErrorCodeMap

/**
 * An error of the JSONL backend: a `code`, a message a person can act on, and
 * where known the `file` (the path the failure concerns: a session file, its
 * lock, a sidecar or the directory), the 1-based `line`, and the system error
 * code (`errno`, e.g. `ENOSPC`) it was made from. Messages never quote event
 * contents, so a corrupt line never leaks what the conversation held.
 */
export class JsonlPersistenceError extends Error {
  override readonly name = 'JsonlPersistenceError'
  readonly file?: string
  readonly line?: number
  readonly errno?: string

  constructor(
    readonly code: JsonlErrorCode,
    message: string,
    options: { file?: string; line?: number; errno?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    if (options.file !== undefined) this.file = options.file
    if (options.line !== undefined) this.line = options.line
    if (options.errno !== undefined) this.errno = options.errno
  }
}

/** The `code` of a Node system error (`ENOENT`, `EEXIST`, …), if it is one. */
export function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
    ? (error as { code: string }).code
    : undefined
}

/** What a file system call was doing when it failed, for `fsError`. */
export interface FsFailure {
  /** Whether the call read or wrote (decides the code of an error no other code names). */
  operation: 'read' | 'write'
  /** The path it concerned. */
  file: string
  /** What was being done, as the start of a sentence: `Writing session "s"`. */
  doing: string
  /** What is lost or kept, and what to do about it, as one or more sentences; appended to the message. */
  consequence?: string
}

/**
 * Turns whatever a file system call threw into a `JsonlPersistenceError`
 * naming the path, with a code for the cause: `NO_SPACE`, `READ_ONLY`,
 * `PERMISSION_DENIED`, `NOT_A_FILE`, `NOT_A_DIRECTORY`, else `WRITE_FAILED`
 * or `READ_FAILED` by the operation. A `JsonlPersistenceError` is returned
 * as it is. The message holds the path and the system code, never data.
 */
export function fsError(error: unknown, failure: FsFailure): JsonlPersistenceError {
  if (error instanceof JsonlPersistenceError) return error
  const errno = errnoCode(error)
  const [code, reason] = classify(errno, failure.operation, error)
  const message = `${failure.doing} failed at ${failure.file}: ${reason}.${failure.consequence ? ' ' + failure.consequence : ''}`
  return new JsonlPersistenceError(code, message, errno === undefined ? { file: failure.file, cause: error } : { file: failure.file, errno, cause: error })
}

function classify(errno: string | undefined, operation: FsFailure['operation'], error: unknown): [JsonlErrorCode, string] {
  switch (errno) {
    case 'ENOSPC':
      return ['NO_SPACE', 'no space left on the device (ENOSPC)']
    case 'EDQUOT':
      return ['NO_SPACE', 'the disk quota is exhausted (EDQUOT)']
    case 'EROFS':
      return ['READ_ONLY', 'the file system is read-only (EROFS)']
    case 'EACCES':
      return ['PERMISSION_DENIED', 'permission denied (EACCES)']
    case 'EPERM':
      return ['PERMISSION_DENIED', 'operation not permitted (EPERM; the file may be immutable or append-only)']
    case 'EISDIR':
      return ['NOT_A_FILE', 'a directory is in the way of the file (EISDIR)']
    case 'ENOTDIR':
      return ['NOT_A_DIRECTORY', 'a part of the path is a file, not a directory (ENOTDIR)']
    default: {
      const fallback: JsonlErrorCode = operation === 'write' ? 'WRITE_FAILED' : 'READ_FAILED'
      if (errno !== undefined) return [fallback, `system error ${errno}`]
      // Not a system error: say what kind, not what it says (a message could quote anything).
      const kind = error instanceof Error ? error.name : typeof error
      return [fallback, `unexpected ${kind}`]
    }
  }
}
