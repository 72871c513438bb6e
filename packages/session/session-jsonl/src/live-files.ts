import type { LiveSessionBackend, Session } from '@deepseek-ai/dsh-session'
import { JsonlPersistenceError } from './errors'
import type { SessionFiles } from './session-files'
import type { SessionWriter } from './session-writer'

/** The holder name of the JSONL backend's claims (`ctx.sessions.claim`). */
export const HOLDER = 'dsh-session-jsonl'

/**
 * The live write-behind of the JSONL backend: what dsh-session's
 * `LiveSessions` (the wiring every backend shares: catch-up, adoption,
 * rollback detection, claims, the shutdown that keeps the tail) needs from
 * this backend. A live session's writer is an ordinary `SessionWriter` of
 * `files`, marked with its `owner` while the session lives, so that direct
 * `append`, `load`, `delete` and `release` of its id refuse
 * (`SESSION_LOCKED`, `SESSION_LIVE`).
 */
export function liveFiles(files: SessionFiles, warn: (error: unknown) => void): LiveSessionBackend<SessionWriter> {
  return {
    name: HOLDER,
    open(session: Session) {
      const writer = files.openWriter(session.id, 0, session)
      writer.owner = session
      return writer
    },
    close(writer) {
      writer.owner = undefined
      return files.closeWriter(writer)
    },
    drop(writer, reason) {
      writer.owner = undefined
      return files.dropWriter(writer, reason)
    },
    closeAll: () => files.closeAll(),
    refusal: (session, cause) =>
      cause instanceof JsonlPersistenceError
        ? cause
        : new JsonlPersistenceError('WRITE_FAILED', `Could not open session "${session.id}" for writing.`, { cause }),
    warn,
  }
}
