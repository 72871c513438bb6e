import type { AnySessionEvent, SessionId } from './types'

/** Cheap facts about one persisted session, for listings (no full read). */
export interface PersistedSessionInfo {
  id: SessionId
  /** From the session's `session/meta`. */
  createdAt: number
  /** Last write time (ms since epoch). */
  updatedAt: number
  cwd?: string
  parentSession?: SessionId
}

/** One repair that crash repair appended on load. */
export interface SessionRepair {
  /** The seq of the appended repair event. */
  seq: number
  type: 'tool/call' | 'tool/result' | 'step/end' | 'turn/end'
  /** A sentence for the person reading the report. */
  detail: string
}

/** A persisted session read back: the log (repaired), and what the load had to fix. */
export interface LoadedSession {
  id: SessionId
  /** The whole log in seq order, including any repair events appended on load. */
  events: readonly AnySessionEvent[]
  /** Events crash repair appended (already durable). */
  repairs: readonly SessionRepair[]
  /** Non-fatal findings, e.g. a torn last line that was dropped. */
  warnings: readonly string[]
}

/**
 * The persistence contract behind `ctx.sessionPersistence` (R-PER-1…4). A
 * backend (dsh-session-jsonl is the embedded default) implements storage only;
 * the wiring to live sessions is the backend's plugin: it writes behind from
 * `session/event` and drains on `session/flush`.
 *
 * - `append` queues events (write-behind); they become durable by `flush`.
 * - `flush(id)` resolves once everything appended before the call is durable
 *   (fsynced): after it resolves, a crash loses nothing before it.
 * - `load(id)` reads without holding the raw file in memory, repairs a crash
 *   (appending the repairs durably), and rejects with code
 *   `SESSION_NOT_FOUND` for an unknown id, or `CORRUPT_SESSION` naming the
 *   file and line for a corrupt record.
 * - `list()` returns cheap metadata, `exists(id)` answers without loading,
 *   `delete(id)` removes a session that is not live.
 */
export interface SessionPersistence {
  append(id: SessionId, events: readonly AnySessionEvent[]): Promise<void>
  flush(id: SessionId): Promise<void>
  load(id: SessionId): Promise<LoadedSession>
  list(): Promise<PersistedSessionInfo[]>
  exists(id: SessionId): Promise<boolean>
  delete(id: SessionId): Promise<void>
}

declare module 'cordis' {
  interface Context {
    /** Optional: mounted by a persistence backend such as dsh-session-jsonl. */
    sessionPersistence: SessionPersistence
  }
}
