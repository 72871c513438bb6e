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
   * How many entries of `request.messages` were sent: its first
   * `messageCount` entries are the messages of this request. For the loop's
   * requests, whose messages are an immutable history snapshot, it is the
   * snapshot's length; a request built by hand may carry a longer array.
   */
  readonly messageCount: number
}

/** One marked request with its meta. */
export interface LoopRequestEntry {
  readonly request: LlmRequest
  readonly meta: LoopRequestMeta
}

/**
 * A session's marked requests, oldest first, with their metas side by side.
 * Entries from `weakFrom` on were marked in the current job and are held
 * directly; older ones through `WeakRef`s (see `LoopRequestSet`). The lists
 * are filled only while a watcher is attached (`watchLoopRequests`).
 */
interface SessionSlots {
  requests: Array<LlmRequest | WeakRef<LlmRequest>>
  metas: LoopRequestMeta[]
  /** Entries before this index are `WeakRef`s. */
  weakFrom: number
  /** The length at which the next sweep of collected requests runs. */
  sweepAt: number
  /** The slots are in the set's `direct` list (they hold requests directly until the next `weaken`). */
  direct: boolean
  /** False once the session was forgotten: its requests are no longer marked. */
  live: boolean
}

/**
 * The process-local identity set of the requests an agent loop sent, for the
 * invariant companion ("model-visible means logged"). Nothing is copied,
 * frozen or mutated: `request.messages` is typically a session's history
 * snapshot.
 *
 * Two parts. The identity part (`has`) is a `WeakMap` from each marked request
 * to its session's slots: it holds nothing alive, and forgetting a session
 * flips its slots' `live` flag, so it costs no walk. The enumeration part
 * (`entries`: each request with its checked meta, oldest first) is kept only
 * while at least one watcher is attached (`watch`): its only reader, the
 * invariant companion, attaches in its `apply` and drops unchecked whatever a
 * session had marked before it first saw that session, so requests marked
 * with no watcher would never be read. Without a watcher a mark keeps no
 * reference to the request, its meta or its messages (in the bench's cold
 * round, one job, that was ~300 B kept per step until the job ended).
 *
 * While watched, requests are held weakly: a long session does not pin every
 * request it ever sent; an entry whose request was collected disappears. A
 * `WeakRef` keeps its target alive until the current job (macrotask) ends
 * anyway, so the set holds requests marked in the current job directly and
 * turns them into `WeakRef`s from a `setImmediate` after it: the same
 * lifetime, without a `WeakRef` per mark on the hot path, and none at all for
 * the requests the companion consumes (`forget`) within the job. Collected
 * entries are swept in place, amortized O(1) per mark. When the last watcher
 * detaches, the lists are emptied.
 */
class LoopRequestSet {
  private readonly marked = new WeakMap<object, SessionSlots>()
  private readonly sessions = new Map<string, SessionSlots>()
  /** Sessions holding requests directly, weakened by the pending `setImmediate`. */
  private readonly direct = new Set<SessionSlots>()
  private weakening = false
  /** Attached watchers: the enumeration lists are filled only while this is above zero. */
  private watchers = 0

  mark(request: LlmRequest, meta: LoopRequestMeta): void {
    if (request === null || typeof request !== 'object' || !Array.isArray(request.messages)) {
      throw invalid('markLoopRequest: request must be an object with a messages array')
    }
    // Checked whether watched or not; the frozen copy is made only for a list that keeps it.
    const listed = this.watchers > 0
    const checked = checkMeta(meta, request.messages.length, listed)
    const sessionId = typeof checked === 'string' ? checked : checked.sessionId
    if (this.has(request)) {
      throw invalid(`markLoopRequest: this request object is already marked (session ${sessionId}); mark each dispatched request once`)
    }
    const slots = this.slotsOf(sessionId)
    this.marked.set(request, slots)
    if (typeof checked === 'string') return
    slots.requests.push(request)
    slots.metas.push(checked)
    if (slots.requests.length >= slots.sweepAt) sweep(slots)
    // A flag rather than a `Set.add` per mark: the set's hash lookup for slots it holds already, every step.
    if (!slots.direct) {
      slots.direct = true
      this.direct.add(slots)
    }
    if (!this.weakening) {
      this.weakening = true
      const immediate: { unref?: () => unknown } = setImmediate(() => this.weaken())
      // Not a reason to keep the process alive; a fake timer may lack `unref`.
      immediate.unref?.()
    }
  }

  has(request: unknown): boolean {
    if (request === null || typeof request !== 'object') return false
    const slots = this.marked.get(request)
    return slots !== undefined && slots.live
  }

  *entries(sessionId: string): IterableIterator<LoopRequestEntry> {
    const slots = this.sessions.get(sessionId)
    if (!slots) return
    // A snapshot, so marking during iteration neither skips nor repeats entries.
    const requests = slots.requests.slice()
    const metas = slots.metas.slice()
    for (let i = 0; i < requests.length; i++) {
      const request = held(requests[i]!)
      if (request !== undefined && this.marked.get(request) === slots && slots.live) yield { request, meta: metas[i]! }
    }
  }

  forget(sessionId: string): void {
    const slots = this.sessions.get(sessionId)
    if (!slots) return
    this.sessions.delete(sessionId)
    this.direct.delete(slots)
    slots.direct = false
    slots.live = false
    empty(slots)
  }

  /** Attaches a watcher; the returned function detaches it (once). */
  watch(): () => void {
    this.watchers++
    let attached = true
    return () => {
      if (!attached) return
      attached = false
      if (--this.watchers > 0) return
      // Nobody reads the lists any more, and a later watcher would drop these entries unread.
      for (const slots of this.sessions.values()) empty(slots)
      for (const slots of this.direct) slots.direct = false
      this.direct.clear()
    }
  }

  /**
   * A session's slots: one map lookup per mark, the same path for every
   * session (a cache of the last session's slots made a new session's first
   * mark take a branch the optimized code had never seen). The slots of a
   * session's first mark are built apart (`newSlots`).
   */
  private slotsOf(sessionId: string): SessionSlots {
    return this.sessions.get(sessionId) ?? this.open(sessionId)
  }

  private open(sessionId: string): SessionSlots {
    const slots = newSlots()
    this.sessions.set(sessionId, slots)
    return slots
  }

  /** After the job that marked them: the requests held directly become `WeakRef`s. */
  private weaken(): void {
    this.weakening = false
    for (const slots of this.direct) {
      const requests = slots.requests
      for (let i = slots.weakFrom; i < requests.length; i++) {
        const entry = requests[i]!
        if (!(entry instanceof WeakRef)) requests[i] = new WeakRef(entry)
      }
      slots.weakFrom = requests.length
      slots.direct = false
    }
    this.direct.clear()
  }
}

/** Drops a session's listed entries (not its marks). */
function empty(slots: SessionSlots): void {
  slots.requests.length = 0
  slots.metas.length = 0
  slots.weakFrom = 0
  slots.sweepAt = FIRST_SWEEP
}

/** A session's empty slots, its lists built with the elements kind of objects (what they hold). */
function newSlots(): SessionSlots {
  const requests: Array<LlmRequest | WeakRef<LlmRequest>> = [NO_REQUEST]
  const metas: LoopRequestMeta[] = [NO_META]
  requests.pop()
  metas.pop()
  return { requests, metas, weakFrom: 0, sweepAt: FIRST_SWEEP, direct: false, live: true }
}

/** The list length at which a session's first sweep of collected requests runs. */
const FIRST_SWEEP = 64

const NO_REQUEST = Object.freeze({}) as LlmRequest
const NO_META = Object.freeze({}) as LoopRequestMeta

/** The request of an entry, or `undefined` once it was collected. */
function held(entry: LlmRequest | WeakRef<LlmRequest>): LlmRequest | undefined {
  return entry instanceof WeakRef ? entry.deref() : entry
}

/** Drops the entries whose request was collected, in place; the list stays proportional to the live requests. */
function sweep(slots: SessionSlots): void {
  const { requests, metas } = slots
  let kept = 0
  let weakFrom = 0
  for (let i = 0; i < requests.length; i++) {
    if (i === slots.weakFrom) weakFrom = kept
    const entry = requests[i]!
    if (held(entry) === undefined) continue
    requests[kept] = entry
    metas[kept] = metas[i]!
    kept++
  }
  if (slots.weakFrom >= requests.length) weakFrom = kept
  requests.length = kept
  metas.length = kept
  slots.weakFrom = weakFrom
  slots.sweepAt = Math.max(FIRST_SWEEP, kept * 2)
}

function invalid(message: string): LlmError {
  return new LlmError({ code: 'INVALID_CONFIG', message })
}

/**
 * Checks `meta`: every field is read once (a getter runs once) and tested
 * exactly as documented; the integer tests take the cheap path for values
 * that fit in 31 bits (every real turn, step and seq) and
 * `Number.isSafeInteger` only beyond. Returns a frozen copy when `copy` (the
 * set lists the mark: a watcher is attached), else only the checked session
 * id: an unwatched mark keeps no meta, and the copy would be one more object
 * and freeze per step for nobody. The copy is made by a constructor
 * (`MetaRecord`): the set keeps every listed meta, and an object literal's
 * allocation site would be pretenured mid-session, deoptimizing `mark`.
 */
function checkMeta(meta: LoopRequestMeta, messages: number, copy: boolean): LoopRequestMeta | string {
  if (meta === null || typeof meta !== 'object') throw invalid('markLoopRequest: meta must be an object')
  const sessionId = meta.sessionId
  const turn = meta.turn
  const step = meta.step
  const lastSeq = meta.lastSeq
  const messageCount = meta.messageCount
  if (typeof sessionId !== 'string' || sessionId.length === 0) throw invalid('markLoopRequest: meta.sessionId must be a non-empty string')
  if (!(integer(turn) && turn >= 1)) throw invalid(`markLoopRequest: meta.turn must be a positive integer (got ${String(turn)})`)
  if (!(integer(step) && step >= 1)) throw invalid(`markLoopRequest: meta.step must be a positive integer (got ${String(step)})`)
  if (!(integer(lastSeq) && lastSeq >= -1)) throw invalid(`markLoopRequest: meta.lastSeq must be an integer >= -1 (got ${String(lastSeq)})`)
  if (!(integer(messageCount) && messageCount >= 0 && messageCount <= messages)) {
    throw invalid(`markLoopRequest: meta.messageCount must be an integer between 0 and request.messages.length (${messages}); got ${String(messageCount)}`)
  }
  if (!copy) return sessionId
  return Object.freeze(new MetaRecord(sessionId, turn, step, lastSeq, messageCount))
}

/** `Number.isSafeInteger(value)`, without the call for a number that fits in 31 bits. */
function integer(value: unknown): value is number {
  return typeof value === 'number' && ((value | 0) === value || Number.isSafeInteger(value))
}

/** `{ sessionId, turn, step, lastSeq, messageCount }` (unfrozen), a plain object without an allocation site (see `records.ts`). */
const MetaRecord = function (this: { -readonly [K in keyof LoopRequestMeta]: LoopRequestMeta[K] }, sessionId: SessionId, turn: number, step: number, lastSeq: number, messageCount: number) {
  this.sessionId = sessionId
  this.turn = turn
  this.step = step
  this.lastSeq = lastSeq
  this.messageCount = messageCount
} as unknown as new (sessionId: SessionId, turn: number, step: number, lastSeq: number, messageCount: number) => LoopRequestMeta
MetaRecord.prototype = Object.prototype

/** The process's set (the service's `markLoopRequest` calls it directly: one call level less per step). */
export const loopRequestSet = new LoopRequestSet()

/**
 * Records `request` as one the agent loop dispatched, at `meta`'s place in its
 * session. Throws `INVALID_CONFIG` for a malformed meta or a request marked
 * twice. The request is never copied, frozen or mutated; it is listed (held
 * weakly, with a frozen copy of `meta`) only while a watcher is attached
 * (`watchLoopRequests`), and otherwise only remembered by identity.
 */
export function markLoopRequest(request: LlmRequest, meta: LoopRequestMeta): void {
  loopRequestSet.mark(request, meta)
}

/** Whether this exact object was marked by `markLoopRequest` (and not forgotten). */
export function isLoopRequest(request: unknown): boolean {
  return loopRequestSet.has(request)
}

/**
 * The marked requests of a session that are still alive, oldest first: those
 * marked while a watcher was attached (`watchLoopRequests`) and not forgotten.
 */
export function loopRequests(sessionId: SessionId | string): IterableIterator<LoopRequestEntry> {
  return loopRequestSet.entries(sessionId)
}

/** Drops every mark of a session (when it is disposed). */
export function forgetLoopRequests(sessionId: SessionId | string): void {
  loopRequestSet.forget(sessionId)
}

/**
 * Attaches a reader of `loopRequests` (the invariant companion does, in its
 * `apply`): from now on each mark is also listed, with its meta, until it is
 * forgotten or collected. Without any watcher a mark is remembered by
 * identity only (`isLoopRequest`) and keeps nothing alive. Returns the
 * detach function (idempotent); when the last watcher detaches, the lists
 * are emptied. Watchers are counted, so several readers may attach.
 */
export function watchLoopRequests(): () => void {
  return loopRequestSet.watch()
}
