import type { Message } from '@deepseek-ai/dsh-llm'
import { createHistorySnapshot } from './log/history-snapshot'
import { emptyList } from './log/lists'
import type { Session } from './session'
import type { SessionEvent, SessionEventType } from './types'

/**
 * What one event contributes to the derived message history.
 *
 * Every derived message sits at a position: the seq of the event that produced
 * it. Without `shadow`, the messages are added at the end, in order. With
 * `shadow: { from, to }`, every message positioned in `[from, to)` is removed
 * and these messages take their place at position `from`: messages positioned
 * before `from` stay before them, messages positioned at or after `to` stay
 * after them. That is how compaction replaces old history with a summary. A
 * later shadow that covers `from` covers the replacement too.
 */
export interface SessionProjection {
  /** The messages, in order. They must be valid JSON messages; the session deep-freezes them. */
  readonly messages?: readonly Message[]
  /** The range of positions to replace; `0 ≤ from ≤ to ≤` the projecting event's seq. */
  readonly shadow?: { readonly from: number; readonly to: number }
}

/**
 * Projects one event of a merged type into messages (R-SES-3).
 *
 * Contract: called synchronously, once per event, when the event is appended
 * (or replayed by `prepare({ events })`), after its data has been validated and
 * frozen and before it is committed. `event.seq` is the seq it will have;
 * `session.events` does not contain it yet. A throw, or an invalid projection,
 * refuses the append (`PROJECTION_FAILED`) and leaves the log unchanged. A
 * projector must be a pure function of the event and the log before it (a
 * resumed session replays it), and must not append.
 */
export type SessionProjector<K extends SessionEventType = SessionEventType> = (
  event: SessionEvent<K>,
  session: Session,
) => SessionProjection | undefined | void

/**
 * The derived history of one session, maintained at append time (R-PERF-1).
 *
 * `entries` only grows while history is append-only; readers get
 * `snapshot()`, an immutable view of its first entries that is made in O(1)
 * and does not follow later appends. A shadowing projection builds new arrays
 * and starts a new `history` (the object `historyOf` answers with), leaving
 * the old arrays, and every snapshot over them, untouched.
 */
export class DerivedHistory {
  /** Built with the elements kind of objects (`log/lists.ts`). */
  private entries: Message[] = emptyList<Message>(MESSAGE_SAMPLE)
  private positions: number[] = []
  private history: object = newHistory()
  /** The snapshot of the current entries, made on first request after a change. */
  private current: readonly Message[] | undefined

  /** The history as it is now, as an immutable snapshot; the same object until the history changes. */
  snapshot(): readonly Message[] {
    return (this.current ??= createHistorySnapshot(this.entries, this.entries.length, this.history))
  }

  /** Adds messages produced by the event at `seq` (the newest position). */
  add(seq: number, messages: readonly Message[]): void {
    if (messages.length === 0) return
    for (let i = 0; i < messages.length; i++) {
      this.entries.push(messages[i]!)
      this.positions.push(seq)
    }
    this.current = undefined
  }

  /** `add` for the one message of a built-in event (no list to make). */
  addOne(seq: number, message: Message): void {
    this.entries.push(message)
    this.positions.push(seq)
    this.current = undefined
  }

  /** Replaces the messages positioned in `[from, to)` with `messages`, at position `from`. */
  replace(from: number, to: number, messages: readonly Message[]): void {
    const lo = lowerBound(this.positions, from)
    const hi = lowerBound(this.positions, to)
    if (lo === hi && hi === this.entries.length) {
      // Nothing is removed and nothing follows: still append-only.
      this.add(from, messages)
      return
    }
    const nextEntries = this.entries.slice(0, lo)
    const nextPositions = this.positions.slice(0, lo)
    for (const message of messages) {
      nextEntries.push(message)
      nextPositions.push(from)
    }
    for (let i = hi; i < this.entries.length; i++) {
      nextEntries.push(this.entries[i]!)
      nextPositions.push(this.positions[i]!)
    }
    this.entries = nextEntries
    this.positions = nextPositions
    this.history = newHistory()
    this.current = undefined
  }
}

/** Stands for a message only to give a new history's list the elements kind of objects. */
const MESSAGE_SAMPLE = Object.freeze({}) as unknown as Message

/** A new history's identity: an opaque object, named for whoever inspects it. */
function newHistory(): object {
  return Object.freeze({ [Symbol.toStringTag]: 'SessionHistory' })
}

/** The first index whose value is ≥ `value` in an ascending array. */
function lowerBound(values: readonly number[], value: number): number {
  let lo = 0
  let hi = values.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (values[mid]! < value) lo = mid + 1
    else hi = mid
  }
  return lo
}
