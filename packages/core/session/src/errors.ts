/**
 * The codes of errors thrown or rejected by dsh-session and by persistence
 * backends. Extensible by declaration merging: a backend adds its own codes
 * (`SESSION_LOCKED`, …) without touching this package.
 */
export interface SessionErrorCodeMap {
  /** `append` data is not lossless JSON, or a field the log relies on has the wrong shape. */
  INVALID_EVENT: true
  /** The append would break the structure of the log (R-SES-4). */
  INVARIANT: true
  /** The event type is neither built in nor registered (`ctx.sessions.registerType`), and not marked ignorable. */
  UNKNOWN_TYPE: true
  /** A registered projector threw, or returned something that is not a valid projection. */
  PROJECTION_FAILED: true
  /** `append` was called from inside a projector of the same session. */
  REENTRANT_APPEND: true
  /** `append` on a session that was detached from the store (its writes would never be persisted). */
  DETACHED: true
  /** `enter` of a session id that is already live. */
  DUPLICATE_ID: true
  /** `enter` of a session that was already entered once (a prepared session is published at most once). */
  ALREADY_ENTERED: true
  /** A seed or fork boundary falls inside a turn: only closed-turn prefixes can be copied. */
  OPEN_TURN: true
  /** A write to `session.events` (or a loaded log's `events`), a read-only view of the log: append with `session.append`. */
  READ_ONLY: true
  /** A fork boundary that is not an integer between 0 and the length of the log. */
  INVALID_BOUNDARY: true
  /** A malformed argument: an empty id, a session from another store, contradictory options. */
  INVALID_ARGUMENT: true
  /**
   * A `session/flush` listener rejected: the durability checkpoint did not
   * complete. `errors` holds every listener's failure; `cause` is that
   * failure itself when exactly one listener failed (a backend's typed error,
   * with its own `code` and `file`), else their `AggregateError`.
   */
  FLUSH_FAILED: true
  /**
   * The backend that persisted a live session stopped (its plugin was
   * unloaded while the session lives, releasing its claim,
   * `ctx.sessions.claim`): nothing appended since is stored, and a flush
   * cannot make it durable. Mount a backend again (it takes the session on
   * at its next event or flush) or dispose the session.
   */
  PERSISTENCE_DETACHED: true
  /** Persistence: no session is stored under the id. */
  SESSION_NOT_FOUND: true
  /** Persistence: a stored record is corrupt (the message names where). */
  CORRUPT_SESSION: true
  /** Persistence: `delete` of a session that is live in this process. */
  SESSION_LIVE: true
}

export type SessionErrorCode = keyof SessionErrorCodeMap

/** Where an error points inside the log, when it is about one event. */
export interface SessionErrorDetails {
  /** The seq the offending event has (or would have had). */
  seq?: number
  /** The event type. */
  type?: string
  /** The path of the offending value inside the event, e.g. `data.chunk.text`. */
  path?: string
  cause?: unknown
  /** `FLUSH_FAILED`: every failure of the `session/flush` listeners, in listener order. */
  errors?: readonly unknown[]
}

/**
 * An error of the session layer: a string `code` and a message a person can
 * act on. Messages name types, seqs, turn/step numbers and paths, never the
 * contents of the conversation.
 */
export class SessionError extends Error {
  override readonly name = 'SessionError'
  readonly code: SessionErrorCode
  readonly seq?: number
  readonly type?: string
  readonly path?: string
  /** `FLUSH_FAILED`: every failure of the `session/flush` listeners, in listener order (`cause` is the only one, when one failed). */
  readonly errors?: readonly unknown[]

  constructor(code: SessionErrorCode, message: string, details: SessionErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.code = code
    if (details.seq !== undefined) this.seq = details.seq
    if (details.type !== undefined) this.type = details.type
    if (details.path !== undefined) this.path = details.path
    if (details.errors !== undefined) this.errors = details.errors
  }
}

/** An error as a log line: its stack when it has one. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`
  return String(error)
}
