import type { LlmRequest } from './adapter'
import { LlmError } from './failure'
import type { SessionId } from './session-id'

/** Where in its session a loop request was sent. */
export interface LoopRequestMeta {
  readonly sessionId: SessionId
  readonly turn: number
  readonly step: number
  /** The seq of the last session event logged before the request was dispatched. */
  readonly lastSeq: number
  /**
   * How many entries of `request.messages` were sent. The array may be the
   * session's live, append-only history, which keeps growing after the call;
   * its first `messageCount` entries are the messages of this request.
   */
  readonly messageCount: number
}

/** One marked request with its meta. */
export interface LoopRequestEntry {
  readonly request: LlmRequest
  readonly meta: LoopRequestMeta
}

interface Slot {
  readonly ref: WeakRef<LlmRequest>
  readonly meta: LoopRequestMeta
}

/**
 * The process-local identity set of the requests an agent loop sent, for the
 * invariant companion ("model-visible means logged"). Requests are held
 * weakly: a long session does not pin every request it ever sent; an entry
 * whose request was collected disappears. Nothing is copied, frozen or
 * mutated: `request.messages` may be a session's live history array.
 */
class LoopRequestSet {
  private readonly metas = new WeakMap<object, LoopRequestMeta>()
  private readonly sessions = new Map<string, { slots: Slot[]; sweepAt: number }>()

  mark(request: LlmRequest, meta: LoopRequestMeta): void {
    if (request === null || typeof request !== 'object' || !Array.isArray(request.messages)) {
      throw invalid('markLoopRequest: request must be an object with a messages array')
    }
    const checked = checkMeta(meta, request.messages.length)
    if (this.metas.has(request)) {
      throw invalid(`markLoopRequest: this request object is already marked (session ${checked.sessionId}); mark each dispatched request once`)
    }
    this.metas.set(request, checked)
    let session = this.sessions.get(checked.sessionId)
    if (!session) this.sessions.set(checked.sessionId, (session = { slots: [], sweepAt: 64 }))
    session.slots.push({ ref: new WeakRef(request), meta: checked })
    // Amortized sweep: the list stays proportional to the requests still alive.
    if (session.slots.length >= session.sweepAt) {
      session.slots = session.slots.filter((slot) => slot.ref.deref() !== undefined)
      session.sweepAt = Math.max(64, session.slots.length * 2)
    }
  }

  has(request: unknown): boolean {
    return request !== null && typeof request === 'object' && this.metas.has(request)
  }

  *entries(sessionId: string): IterableIterator<LoopRequestEntry> {
    const session = this.sessions.get(sessionId)
    if (!session) return
    // A snapshot of the slots, so marking during iteration neither skips nor repeats entries.
    for (const slot of session.slots.slice()) {
      const request = slot.ref.deref()
      if (request !== undefined && this.metas.get(request) === slot.meta) yield { request, meta: slot.meta }
    }
  }

  forget(sessionId: string): void {
    const session = this.sessions.get(sessionId)
    if (!session) return
    this.sessions.delete(sessionId)
    for (const slot of session.slots) {
      const request = slot.ref.deref()
      if (request !== undefined && this.metas.get(request) === slot.meta) this.metas.delete(request)
    }
  }
}

function invalid(message: string): LlmError {
  return new LlmError({ code: 'INVALID_CONFIG', message })
}

function checkMeta(meta: LoopRequestMeta, messages: number): LoopRequestMeta {
  if (meta === null || typeof meta !== 'object') throw invalid('markLoopRequest: meta must be an object')
  const { sessionId, turn, step, lastSeq, messageCount } = meta
  if (typeof sessionId !== 'string' || sessionId.length === 0) throw invalid('markLoopRequest: meta.sessionId must be a non-empty string')
  if (!Number.isSafeInteger(turn) || turn < 1) throw invalid(`markLoopRequest: meta.turn must be a positive integer (got ${String(turn)})`)
  if (!Number.isSafeInteger(step) || step < 1) throw invalid(`markLoopRequest: meta.step must be a positive integer (got ${String(step)})`)
  if (!Number.isSafeInteger(lastSeq) || lastSeq < -1) throw invalid(`markLoopRequest: meta.lastSeq must be an integer >= -1 (got ${String(lastSeq)})`)
  if (!Number.isSafeInteger(messageCount) || messageCount < 0 || messageCount > messages) {
    throw invalid(`markLoopRequest: meta.messageCount must be an integer between 0 and request.messages.length (${messages}); got ${String(messageCount)}`)
  }
  return Object.freeze({ sessionId, turn, step, lastSeq, messageCount })
}

const loopRequestSet = new LoopRequestSet()

/**
 * Records `request` as one the agent loop dispatched, at `meta`'s place in its
 * session. Throws `INVALID_CONFIG` for a malformed meta or a request marked
 * twice. The request is held weakly and never copied, frozen or mutated.
 */
export function markLoopRequest(request: LlmRequest, meta: LoopRequestMeta): void {
  loopRequestSet.mark(request, meta)
}

/** Whether this exact object was marked by `markLoopRequest` (and not forgotten). */
export function isLoopRequest(request: unknown): boolean {
  return loopRequestSet.has(request)
}

/** The marked requests of a session that are still alive, oldest first. */
export function loopRequests(sessionId: SessionId | string): IterableIterator<LoopRequestEntry> {
  return loopRequestSet.entries(sessionId)
}

/** Drops every mark of a session (when it is disposed). */
export function forgetLoopRequests(sessionId: SessionId | string): void {
  loopRequestSet.forget(sessionId)
}
