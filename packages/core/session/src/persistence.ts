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

/**
 * A non-fatal finding of a load, for the person who resumes the session (the
 * loop hands it on; a CLI prints `message`). A backend never puts event
 * contents in it.
 */
export interface SessionLoadWarning {
  /**
   * What was found, as a stable string to branch on. dsh-session-jsonl
   * reports `TORN_TAIL`: bytes after the file's last newline (a write its
   * writer never finished) were cut from the file and copied to `sidecar`.
   */
  code: string
  /** A sentence a person can act on, naming the file (and line) when there is one. */
  message: string
  /** The storage file concerned, for file-based backends. */
  file?: string
  /** The 1-based line (record) concerned. */
  line?: number
  /** Where bytes the load cut from the log were copied to before it cut them. */
  sidecar?: string
}

/** A persisted session read back: the log (repaired), and what the load had to fix. */
export interface LoadedSession {
  id: SessionId
  /** The whole log in seq order, including any repair events appended on load. */
  events: readonly AnySessionEvent[]
  /** Events crash repair appended (already durable). */
  repairs: readonly SessionRepair[]
  /**
   * Non-fatal findings, e.g. a torn tail that was cut (and kept in a
   * sidecar). Anything that would lose a complete record is not a warning
   * but a rejection of the load.
   */
  warnings: readonly SessionLoadWarning[]
}

/** Options of `SessionPersistence.load`. */
export interface SessionLoadOptions {
  /**
   * Abandons the load (the agent loop passes the signal of a resume, which
   * aborts when its owner unloads). Once it aborts, the load rejects with the
   * signal's reason at once, and the backend releases what it holds for the
   * id (its per-id queue and its lock) as soon as no write of the load is
   * under way: an abandoned load never blocks the next load, append or delete
   * of the session, and never writes anything (no torn-tail cut, no repair)
   * after it was abandoned.
   */
  signal?: AbortSignal
}

/**
 * The persistence contract behind `ctx.sessionPersistence` (R-PER-1…4). A
 * backend (dsh-session-jsonl is the embedded default) implements storage only;
 * the wiring to live sessions is the backend's plugin: it writes behind from
 * `session/event` and drains on `session/flush` (`persistLiveSessions` and
 * `WriteBehind` do that for any backend), and claims each session it writes
 * (`ctx.sessions.claim`), so that a flush after it stopped says so.
 *
 * - `append` queues events (write-behind); they become durable by `flush`.
 * - `flush(id)` resolves once everything appended before the call is durable
 *   (fsynced): after it resolves, a crash loses nothing before it.
 * - `load(id, { signal })` reads without holding the raw file in memory,
 *   repairs a crash (appending the repairs durably; `loadRepaired` does it
 *   for any backend), and rejects with code
 *   `SESSION_NOT_FOUND` for an unknown id, or `CORRUPT_SESSION` naming the
 *   file and line for a corrupt record. It may drop only what a crash can
 *   leave unfinished (a torn tail), after keeping a copy, and reports that in
 *   `warnings`; it never drops a complete record. An aborted `signal` ends
 *   it at once (see `SessionLoadOptions`).
 * - Once a write of a session has failed, `flush(id)` (and the plugin's
 *   `session/flush`) rejects for that session until it is released or
 *   disposed: nothing reports success for events that are not stored.
 * - `list()` returns cheap metadata, `exists(id)` answers without loading,
 *   `delete(id)` removes a session that is not live.
 */
export interface SessionPersistence {
  append(id: SessionId, events: readonly AnySessionEvent[]): Promise<void>
  flush(id: SessionId): Promise<void>
  load(id: SessionId, options?: SessionLoadOptions): Promise<LoadedSession>
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
