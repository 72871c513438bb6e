import type { Message } from '@deepseek-ai/dsh-llm'
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
 * `messages` only grows while history is append-only, so a caller that keeps
 * `(array, length)` holds an exact snapshot. A shadowing projection builds new
 * arrays and leaves the old ones untouched.
 */
export class DerivedHistory {
  messages: Message[] = []
  private positions: number[] = []

  /** Adds messages produced by the event at `seq` (the newest position). */
  add(seq: number, messages: readonly Message[]): void {
    for (let i = 0; i < messages.length; i++) {
      this.messages.push(messages[i]!)
      this.positions.push(seq)
    }
  }

  /** Replaces the messages positioned in `[from, to)` with `messages`, at position `from`. */
  replace(from: number, to: number, messages: readonly Message[]): void {
    const lo = lowerBound(this.positions, from)
    const hi = lowerBound(this.positions, to)
    if (lo === hi && hi === this.messages.length) {
      // Nothing is removed and nothing follows: still append-only.
      for (const message of messages) {
        this.messages.push(message)
        this.positions.push(from)
      }
      return
    }
    const nextMessages = this.messages.slice(0, lo)
    const nextPositions = this.positions.slice(0, lo)
    for (const message of messages) {
      nextMessages.push(message)
      nextPositions.push(from)
    }
    for (let i = hi; i < this.messages.length; i++) {
      nextMessages.push(this.messages[i]!)
      nextPositions.push(this.positions[i]!)
    }
    this.messages = nextMessages
    this.positions = nextPositions
  }
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
