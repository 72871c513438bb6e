import type { LiveSessionBackend } from '@deepseek-ai/dsh-session'
import type { Sql } from './database'
import { PostgresPersistenceError } from './errors'
import type { SessionStore } from './session-store'
import type { SessionWriter } from './session-writer'

/** The holder name of this backend's claims (`ctx.sessions.claim`). */
export const HOLDER = 'dsh-session-postgres'

/**
 * What dsh-session's `LiveSessions` (the wiring every backend shares) needs
 * from this backend. `closeAll` also ends the watches (`closing`) and the
 * connection pool: it is the last thing the plugin does.
 */
export function liveRows(store: SessionStore, sql: Sql, closing: AbortController, warn: (error: unknown) => void): LiveSessionBackend<SessionWriter> {
  return {
    name: HOLDER,
    open: (session) => store.openLive(session),
    close: (writer) => store.closeWriter(writer),
    drop: (writer, reason) => store.dropWriter(writer, reason),
    closeAll: async () => {
      try {
        await store.closeAll()
      } finally {
        closing.abort()
        await sql.end({ timeout: 5 })
      }
    },
    refusal: (session, cause) =>
      cause instanceof PostgresPersistenceError
        ? cause
        : new PostgresPersistenceError('DATABASE_FAILED', `Could not open session "${session.id}" for writing.`, { id: session.id, cause }),
    warn,
  }
}
