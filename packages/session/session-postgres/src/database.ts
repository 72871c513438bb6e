import postgres from 'postgres'
import { PostgresPersistenceError } from './errors'

/** The client this package talks through (postgres.js). */
export type Sql = postgres.Sql

/** The qualified names of the backend's tables and its notification channel, in one schema. */
export interface Tables {
  readonly schema: string
  readonly sessions: string
  readonly events: string
  readonly leases: string
  readonly migrations: string
  /** The `LISTEN`/`NOTIFY` channel on which each committed write announces `<id>\t<next seq>`. */
  readonly channel: string
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,39}$/

/** The tables of `schema`, which must be a plain lower-case identifier (it is written into statements). */
export function tablesOf(schema: string): Tables {
  if (!IDENTIFIER.test(schema)) {
    throw new PostgresPersistenceError(
      'INVALID_CONFIG',
      `The schema name ${JSON.stringify(schema)} is not a plain identifier; use 1 to 40 characters of a-z, 0-9 and _ (not starting with a digit).`,
    )
  }
  const q = (name: string) => `"${schema}"."${name}"`
  return {
    schema,
    sessions: q('sessions'),
    events: q('events'),
    leases: q('leases'),
    migrations: q('migrations'),
    channel: `dsh_events_${schema}`,
  }
}

export interface ConnectOptions {
  url: string
  /** Connections in the pool. */
  max: number
  /** The lease TTL: a transaction left idle longer than this (its process paused mid-transaction) is ended by the server. */
  leaseTtlMs: number
  applicationName: string
}

/**
 * Opens the pool. Every connection asks the server to end a transaction left
 * idle longer than the lease TTL (`idle_in_transaction_session_timeout`): a
 * process stopped between two statements of a write would otherwise keep the
 * lease row locked, and the next holder's takeover would wait for it forever.
 * Connections are opened lazily, on the first statement.
 */
export function connect(options: ConnectOptions): Sql {
  return postgres(options.url, {
    max: options.max,
    onnotice: () => {},
    connect_timeout: 10,
    idle_timeout: 60,
    connection: {
      application_name: options.applicationName,
      idle_in_transaction_session_timeout: options.leaseTtlMs,
    },
  })
}
