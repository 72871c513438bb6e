/** The codes of errors thrown or rejected by the PostgreSQL persistence backend. */
export interface PostgresErrorCodeMap {
  /** The configuration cannot work (no connection string, a schema name that is not an identifier, a lease TTL over 3 s). */
  INVALID_CONFIG: true
  /** No stored session has the id. */
  SESSION_NOT_FOUND: true
  /** A stored event is not a valid event (bad JSON, a wrong `seq`, a gap); the message names the session and seq. */
  CORRUPT_SESSION: true
  /** A stored event has a type this process does not know and the writer did not mark ignorable (same code as dsh-session's). */
  UNKNOWN_TYPE: true
  /** The session was written in a newer format `version` than this package reads. */
  UNSUPPORTED_VERSION: true
  /** Another process (or another writer in this process) holds the session's lease and it has not expired. */
  SESSION_LOCKED: true
  /** This process held the session's lease, and another process took it over (after it expired): nothing more of this writer is stored. */
  LEASE_LOST: true
  /** A fresh session would overwrite a stored session with the same id. */
  SESSION_EXISTS: true
  /** `delete()` of a session that is live in this process. */
  SESSION_LIVE: true
  /** `append()` of events that do not continue the log (seq gap, missing `session/meta`). */
  INVALID_APPEND: true
  /** A method was given an argument it cannot use (a `watch()` `fromSeq` that is not a whole number from 0). */
  INVALID_ARGUMENT: true
  /** The database schema is newer than this package (a later version migrated it). */
  UNSUPPORTED_SCHEMA: true
  /** The server is older than PostgreSQL 14, the oldest this package runs on; checked on start, before any change. */
  UNSUPPORTED_SERVER: true
  /**
   * The server could not be reached, or a statement failed (the connection dropped, the server restarted). A
   * statement the server refused stored nothing; a write whose connection was lost before the server answered
   * may have been committed (the message says which): load the session again to see what it holds.
   */
  DATABASE_FAILED: true
}

export type PostgresErrorCode = keyof PostgresErrorCodeMap

/**
 * An error of the PostgreSQL backend: a `code`, a message a person can act
 * on, and where known the session `id`, the `seq` concerned and the
 * server's SQLSTATE (`sqlState`, e.g. `57P01` when the server shut down).
 * Messages never quote event contents nor the connection string (it may hold
 * a password).
 */
export class PostgresPersistenceError extends Error {
  override readonly name = 'PostgresPersistenceError'
  readonly id?: string
  readonly seq?: number
  readonly sqlState?: string

  constructor(
    readonly code: PostgresErrorCode,
    message: string,
    options: { id?: string; seq?: number; sqlState?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    if (options.id !== undefined) this.id = options.id
    if (options.seq !== undefined) this.seq = options.seq
    if (options.sqlState !== undefined) this.sqlState = options.sqlState
  }
}

/** The SQLSTATE of a server error, or the client's error code (`ECONNREFUSED`, `CONNECTION_CLOSED`), if any. */
export function sqlStateOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? code : undefined
}

/**
 * Turns whatever the client threw while `doing` something into a typed
 * error: a `PostgresPersistenceError` is returned as it is; anything else is
 * `DATABASE_FAILED`, naming the SQLSTATE or client code (never the
 * statement's parameters, which hold conversation data).
 */
export function databaseError(error: unknown, doing: string, id?: string, consequence?: string): PostgresPersistenceError {
  if (error instanceof PostgresPersistenceError) return error
  const state = sqlStateOf(error)
  const reason = state === undefined ? `unexpected ${error instanceof Error ? error.name : typeof error}` : describeState(state)
  const message = `${doing} failed: ${reason}.${consequence ? ' ' + consequence : ''}`
  return new PostgresPersistenceError('DATABASE_FAILED', message, {
    ...(id === undefined ? {} : { id }),
    ...(state === undefined ? {} : { sqlState: state }),
    cause: error,
  })
}

function describeState(state: string): string {
  switch (state) {
    case 'ECONNREFUSED':
      return 'the server refused the connection (ECONNREFUSED: is it running, and is the address right?)'
    case 'CONNECTION_CLOSED':
    case 'CONNECTION_ENDED':
    case 'CONNECTION_DESTROYED':
    case 'ECONNRESET':
    case 'EPIPE':
    case 'ETIMEDOUT':
      return `the connection to the server was lost (${state})`
    case 'CONNECT_TIMEOUT':
      return 'connecting to the server timed out (CONNECT_TIMEOUT)'
    case '57P01':
    case '57P02':
    case '57P03':
      return `the server is shutting down or starting (SQLSTATE ${state})`
    case '28P01':
    case '28000':
      return `the server refused the credentials (SQLSTATE ${state})`
    case '3D000':
      return 'the database does not exist (SQLSTATE 3D000)'
    case '25P03':
      return 'the server ended an idle transaction (SQLSTATE 25P03: the process was paused mid-transaction)'
    default:
      // A socket's errno (EPIPE has five letters too) is the client's, not a SQLSTATE: no SQLSTATE class starts with E.
      return state.length === 5 && !/^E[A-Z]+$/.test(state) ? `SQLSTATE ${state}` : `client error ${state}`
  }
}

/** Client codes of a connection lost while a statement may have been under way: its outcome is unknown. */
const OUTCOME_UNKNOWN = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'])

/**
 * The error of a failed session write: what the failed flush means for its
 * events. A SQLSTATE is the server refusing the statement, which then stored
 * nothing. A connection lost mid-write (or a failure of unknown kind) leaves
 * the outcome open: the server may have committed the statement before the
 * connection dropped, so the message does not claim the events are lost.
 */
export function writeFailure(error: unknown, id: string): PostgresPersistenceError {
  const state = sqlStateOf(error)
  const unknown = state === undefined || OUTCOME_UNKNOWN.has(state)
  const consequence = unknown
    ? 'The server did not answer, so the events of that flush may or may not be stored (a commit can land just before a connection drops), and nothing after them is; load the session again to see what it holds and continue it.'
    : 'Nothing after the last successful flush is stored; load the session again to continue it.'
  return databaseError(error, `Writing session "${id}"`, id, consequence)
}
