import type { Message } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent, SessionEvent, SessionEventMap, SessionEventType, SessionId } from './types'

/** Where the log stands: the structure the append invariants (R-SES-4) track. */
export interface SessionPosition {
  /** The number of the last turn opened (0 before the first turn). */
  readonly lastTurn: number
  /** The open turn, if any. */
  readonly openTurn?: { readonly turn: number; readonly trigger: SessionEventMap['turn/start']['trigger'] }
  /** The open step of the open turn, if any. */
  readonly openStep?: { readonly turn: number; readonly step: number }
  /** The number of the last step opened in the open turn (0 when none). */
  readonly lastStep: number
}

/**
 * One session: an append-only log of typed events, the only source of truth.
 *
 * Contract:
 * - `append` validates that `data` is lossless JSON, checks the structural
 *   invariants (R-SES-4), deep-freezes the data, assigns `seq` (the index in
 *   the log) and `time`, commits, and then publishes `session/event`
 *   synchronously. A bad append throws a typed error and leaves the log
 *   unchanged. Observer failures are contained and logged; they never fail the
 *   append (R-SES-1).
 * - `events` is a read-only view of the log itself (not a copy): `events[seq]`.
 */
export interface Session {
  readonly id: SessionId
  readonly meta: SessionEventMap['session/meta']
  readonly events: readonly AnySessionEvent[]
  readonly position: SessionPosition
  /**
   * How many leading events came from `prepare({ events })`, i.e. were
   * already held by a persistence backend when the session was loaded; `0`
   * for a fresh or forked session. A write-behind backend writes a session
   * from here on: on `session/created` and on every `session/event` it writes
   * every event it has not written yet, so it never misses the prefix that
   * was appended before the session was announced.
   */
  readonly loadedLength: number
  /**
   * The seq of the log's last event: `events.length - 1`, read without the
   * `events` view (whose every read goes through a proxy). For a driver that
   * notes where the log stands on a hot path (the agent loop's request marks,
   * once per step).
   */
  readonly lastSeq: number
  /**
   * The number of the last turn opened (0 before the first): `position.lastTurn`
   * without building the position object (a new one after every boundary).
   */
  readonly lastTurn: number
  append<K extends SessionEventType>(type: K, data: SessionEventMap[K]): SessionEvent<K>
  /**
   * The type of the event at `seq`, or `undefined` past the end, without
   * reading the event: a packed chunk is not rebuilt. A reader that scans a
   * long log for a few kinds of events (an inbox replay, the last header)
   * checks the type first and reads `events[seq]` only for those.
   */
  typeAt(seq: number): SessionEventType | undefined
  /**
   * The message history derived from the log by the projection rules
   * (R-SES-3), maintained incrementally: each append costs O(its own
   * messages), never a re-walk of the log (R-PERF-1).
   *
   * Returns an immutable snapshot (R-SES-2): a read-only `Message[]` of the
   * history as it is now, which later appends do not change (its `length` is
   * fixed), made in O(1) without copying. `Array.isArray` holds and it reads
   * like an array in every way (index, iteration, `map`, `slice`, spread,
   * `JSON.stringify`); every write to it throws a `TypeError`
   * (`ReadOnlyHistoryError`, code `READ_ONLY`). Its entries are frozen and keep
   * their identity. Calls with no new message in between return the same
   * snapshot. Snapshots of one append-only run of history share
   * `historyOf(snapshot)` (dsh-llm), so an incremental reader can key on it
   * and resume at the length it reached; a projector that shadows earlier
   * entries starts a new history.
   */
  deriveMessages(): readonly Message[]
}
