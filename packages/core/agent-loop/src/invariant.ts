import type { InvariantViolation, Invariants } from '@deepseek-ai/dsh-invariants'
import { forgetLoopRequests, historyOf, loopRequests, watchLoopRequests, type LlmRequest, type LoopRequestEntry, type LoopRequestMeta, type Message, type ToolSchema } from '@deepseek-ai/dsh-llm'
import type { EventTypeInfo, Session, SessionEvent } from '@deepseek-ai/dsh-session'
import type { Context } from './cordis'
import { LogReplica } from './log-replica'
// The declarations this entry relies on (ctx.sessions, ctx.llm, session/* events), for its own .d.ts build.
import type {} from './service'

/** The name this companion registers with `ctx.invariants`. */
export const REQUEST_RECONSTRUCTION = 'agent-loop/request-reconstruction'

/** One way a loop request differs from what its session log says it was. */
export interface RequestDifference {
  /**
   * Where: `step`, `lastSeq`, `sessionId`, `messages.length`,
   * `messages[2].content[0].text`, `header`, `header.model`,
   * `header.tools[1].parameters`, …
   */
  readonly path: string
  /** The request's value there, as abbreviated JSON; `(none)` when it has none. */
  readonly request: string
  /** What the log says, abbreviated the same way. */
  readonly log: string
  /** The seq of the log event the expected value comes from, when one does. */
  readonly seq?: number
}

/** The `details` of a `agent-loop/request-reconstruction` violation about the messages, header or step. */
export interface RequestMismatchDetails extends LoopRequestMeta {
  readonly kind: 'mismatch'
  /** Every difference found (at most 50; `differenceCount` counts them all). */
  readonly differences: readonly RequestDifference[]
  readonly differenceCount: number
}

/**
 * The `details` of a violation saying that the messages of a session's
 * requests cannot be rebuilt from its log from `event` on: a merged event type
 * produces messages and this check cannot run its projector. Reported once per
 * session; the header and step of those requests are still checked.
 */
export interface RequestUncheckableDetails extends LoopRequestMeta {
  readonly kind: 'not-checkable'
  readonly event: { readonly seq: number; readonly type: string }
  readonly reason: string
}

const MAX_DIFFERENCES = 50
/** What the check keeps per live session. */
interface SessionState {
  replica: LogReplica
  /** The messages array last found equal to the log, how many entries, and at which replica epoch. */
  /** The history (a snapshot's shared `historyOf` identity, or the array itself) verified up to `count`. */
  verified: { readonly history: object; readonly count: number; readonly epoch: number } | undefined
  /** The tools of the last request found equal to a header's, so an unchanged list is not walked again. */
  tools: { readonly header: SessionEvent<'request/header'>; readonly tools: readonly ToolSchema[] } | undefined
  opaqueReported: boolean
}

/**
 * `@deepseek-ai/dsh-agent-loop/invariant` (R-INV-1, "model-visible means
 * logged"): every request the loop marked (`ctx.llm.markLoopRequest`) must be
 * exactly what its session's log explains.
 *
 * For each marked request whose session is live, it rebuilds from the log
 * alone, up to `meta.lastSeq`, the message list (an independent
 * implementation of the projection rules) and the last `request/header`, and
 * compares: the first `meta.messageCount` messages (ids, roles, content deep
 * equal), the header fields (provider, model, reasoning effort, system text,
 * tools), and that step `meta.turn`.`meta.step` is the step open at
 * `lastSeq`. Each difference is reported with its path, both values and the
 * seq it comes from.
 *
 * The set lists marks only while a reader is attached: the companion attaches
 * (`watchLoopRequests`) for as long as it is loaded. What a session marked
 * before the companion first saw it is dropped unchecked anyway (below), so
 * a spine without the companion keeps no request, meta or snapshot per step.
 *
 * Cost: each request is verified once, then dropped from the identity set
 * (`forgetLoopRequests`): the companion consumes the set, which only it
 * reads, so finding the new requests costs O(new requests), and a verified
 * request is free to be collected. (It calls dsh-llm's exported
 * `loopRequests`/`forgetLoopRequests`, which `ctx.llm` delegates to, to stay
 * off Cordis' tracing proxy on every step.) A session's log is read once in total
 * (requests are verified in order, and an append-only history is compared
 * from where the previous request's comparison ended); only a request whose
 * `lastSeq` lies behind one already verified, or the first request after a
 * shadowing projection, is rebuilt or compared from the start. Requests are
 * verified eagerly at each `assistant/message` and `turn/end` of a live
 * session, before the identity set (which holds them weakly) can lose them,
 * and by `ctx.invariants.check()`.
 *
 * Direct one-shot `ctx.llm` calls are not marked and not checked.
 */
export const RequestReconstructionInvariant = {
  name: 'dsh-agent-loop/invariant',
  inject: ['invariants', 'sessions'],
  apply(ctx: Context): void {
    // Reaching a service through a context costs tens of µs in Cordis: hold them once.
    const { sessions, invariants } = ctx
    // Marks are listed from here on, and no longer once this companion unloads.
    ctx.effect(() => watchLoopRequests(), 'watchLoopRequests')
    const states = new WeakMap<Session, SessionState>()
    const typeInfo = (type: string) => sessions.typeInfo(type)

    /** Takes the requests marked for `session`'s id out of the identity set. */
    const take = (session: Session): LoopRequestEntry[] => {
      const entries = [...loopRequests(session.id)]
      if (entries.length) forgetLoopRequests(session.id)
      return entries
    }

    /**
     * The identity set is keyed by session id for the whole process: entries
     * already there when a session is first seen belong to an earlier session
     * with that id (or to another app's), and are dropped unchecked.
     */
    const track = (session: Session): SessionState => {
      let state = states.get(session)
      if (state) return state
      take(session)
      states.set(session, (state = { replica: new LogReplica(session, typeInfo), verified: undefined, tools: undefined, opaqueReported: false }))
      return state
    }

    const verifySession = (session: Session): InvariantViolation[] => {
      const state = track(session)
      const found: InvariantViolation[] = []
      for (const entry of take(session)) found.push(...verifyRequest(session, state, entry, typeInfo))
      return found
    }

    ctx.on('session/created', (session) => void track(session))

    // Only live sessions publish `session/event`.
    ctx.on('session/event', (session, event) => {
      if (event.type !== 'assistant/message' && event.type !== 'turn/end') return
      const found = verifySession(session)
      for (const violation of found) invariants.notice(violation)
    })

    // Requests still unverified when their session goes are dropped: a later session may reuse its id.
    ctx.on('session/disposed', (session) => {
      take(session)
      states.delete(session)
    })

    invariants.register(REQUEST_RECONSTRUCTION, () => {
      const found: InvariantViolation[] = []
      for (const session of sessions.list()) found.push(...verifySession(session))
      return found
    })
  },
}

export default RequestReconstructionInvariant

function verifyRequest(
  session: Session,
  state: SessionState,
  entry: LoopRequestEntry,
  typeInfo: (type: string) => EventTypeInfo | undefined,
): InvariantViolation[] {
  const { request, meta } = entry
  let replica = state.replica
  // A request behind the shared replica (marked out of order) gets a replica of its own.
  const behind = meta.lastSeq < replica.next - 1
  if (behind) replica = new LogReplica(session, typeInfo)
  replica.advance(meta.lastSeq)

  const found = new Differences()
  const length = session.events.length
  if (meta.lastSeq >= length) found.add({ path: 'lastSeq', request: String(meta.lastSeq), log: `the log ends at seq ${length - 1}` })
  if (request.sessionId !== undefined && request.sessionId !== meta.sessionId) {
    found.add({ path: 'sessionId', request: brief(request.sessionId), log: brief(meta.sessionId) })
  }
  const open = replica.openStep
  if (!open || open.turn !== meta.turn || open.step !== meta.step) {
    found.add({
      path: 'step',
      request: `${meta.turn}.${meta.step}`,
      log: open ? `${open.turn}.${open.step} is open` : 'no step is open',
      ...(open ? { seq: open.seq } : {}),
    })
  }
  compareHeader(request, replica.header, behind ? undefined : state, found)

  const violations: InvariantViolation[] = []
  const opaque = replica.opaque
  if (opaque === undefined) compareMessages(request.messages, meta.messageCount, replica, behind ? undefined : state, found)
  else if (!state.opaqueReported) {
    state.opaqueReported = true
    const details: RequestUncheckableDetails = { ...meta, kind: 'not-checkable', event: { seq: opaque.seq, type: opaque.type }, reason: opaque.reason }
    violations.push({
      invariant: REQUEST_RECONSTRUCTION,
      message:
        `${where(meta)}: the messages of this and later requests cannot be rebuilt from the log: ` +
        `event ${opaque.seq}: ${opaque.reason}; their header and step are still checked`,
      details,
    })
  }

  if (found.count > 0) {
    const details: RequestMismatchDetails = { ...meta, kind: 'mismatch', differences: found.list, differenceCount: found.count }
    const shown = found.list.slice(0, 3).map(describeDifference).join('; ')
    const more = found.count > 3 ? `; and ${found.count - 3} more` : ''
    violations.push({
      invariant: REQUEST_RECONSTRUCTION,
      message: `${where(meta)}: the request differs from what its log explains: ${shown}${more}`,
      details,
    })
  }
  return violations
}

function compareHeader(
  request: LlmRequest,
  header: SessionEvent<'request/header'> | undefined,
  state: SessionState | undefined,
  found: Differences,
): void {
  if (!header) {
    found.add({ path: 'header', request: brief(`${request.provider}/${request.model}`), log: '(no request/header at or before lastSeq)' })
    return
  }
  const seq = header.seq
  const data = header.data
  const fields = [
    ['provider', request.provider, data.provider],
    ['model', request.model, data.model],
    ['reasoningEffort', request.reasoningEffort, data.reasoningEffort],
    ['maxTokens', request.maxTokens, data.maxTokens],
    ['temperature', request.temperature, data.temperature],
    // The model sees no system text and no tools either way.
    ['system', request.system ?? '', data.system],
  ] as const
  for (const [field, sent, logged] of fields) {
    if (sent !== logged) found.add({ path: `header.${field}`, request: brief(sent), log: brief(logged), seq })
  }
  const tools = request.tools ?? []
  if (state?.tools && state.tools.header === header && state.tools.tools === tools) return
  const difference = firstDifference(tools, data.tools, 'header.tools')
  if (difference) found.add({ ...difference, seq })
  else if (state) state.tools = { header, tools }
}

function compareMessages(
  messages: readonly Message[],
  count: number,
  replica: LogReplica,
  state: SessionState | undefined,
  found: Differences,
): void {
  const expected = replica.messages
  const before = found.count
  // An append-only history already found equal up to `verified.count` need not be walked again.
  // Snapshots of one session's history are new objects per request but share one `historyOf` identity.
  const history: object = historyOf(messages) ?? messages
  const verified = state?.verified
  const start = verified && verified.history === history && verified.epoch === replica.epoch && verified.count <= count ? verified.count : 0
  if (expected.length !== count) {
    found.add({ path: 'messages.length', request: String(count), log: String(expected.length) })
  }
  const end = Math.max(count, expected.length)
  for (let i = start; i < end; i++) {
    const sent = i < count ? messages[i] : undefined
    const logged = expected[i]
    if (sent === logged) continue
    const path = `messages[${i}]`
    const at = logged === undefined ? {} : { seq: replica.originOf(i)! }
    if (sent === undefined || logged === undefined) {
      found.add({ path, request: brief(sent), log: brief(logged), ...at })
      continue
    }
    const difference =
      sent.id !== logged.id
        ? { path: `${path}.id`, request: brief(sent.id), log: brief(logged.id) }
        : sent.role !== logged.role
          ? { path: `${path}.role`, request: brief(sent.role), log: brief(logged.role) }
          : firstDifference(sent.content, logged.content, `${path}.content`)
    if (difference) found.add({ ...difference, ...at })
  }
  if (state && found.count === before) state.verified = { history, count, epoch: replica.epoch }
}

/** The differences of one request: all counted, the first `MAX_DIFFERENCES` kept. */
class Differences {
  readonly list: RequestDifference[] = []
  count = 0

  add(difference: RequestDifference): void {
    this.count++
    if (this.list.length < MAX_DIFFERENCES) this.list.push(difference)
  }
}

/** The first place two JSON values differ (an `undefined` property counts as absent), or nothing. */
function firstDifference(sent: unknown, logged: unknown, path: string): RequestDifference | undefined {
  if (sent === logged) return undefined
  const mismatch = { path, request: brief(sent), log: brief(logged) }
  if (typeof sent !== 'object' || typeof logged !== 'object' || sent === null || logged === null) return mismatch
  if (Array.isArray(sent) !== Array.isArray(logged)) return mismatch
  if (Array.isArray(sent)) {
    const other = logged as readonly unknown[]
    const shared = Math.min(sent.length, other.length)
    for (let i = 0; i < shared; i++) {
      const inner = firstDifference(sent[i], other[i], `${path}[${i}]`)
      if (inner) return inner
    }
    if (sent.length !== other.length) return { path: `${path}.length`, request: String(sent.length), log: String(other.length) }
    return undefined
  }
  const a = sent as Record<string, unknown>
  const b = logged as Record<string, unknown>
  for (const key of Object.keys(a)) {
    const inner = firstDifference(a[key], b[key], `${path}.${key}`)
    if (inner) return inner
  }
  for (const key of Object.keys(b)) {
    if (a[key] === undefined && b[key] !== undefined) return { path: `${path}.${key}`, request: '(none)', log: brief(b[key]) }
  }
  return undefined
}

const BRIEF_LENGTH = 60

/** Abbreviated JSON of a value, for a difference; `(none)` for `undefined`. */
function brief(value: unknown): string {
  if (value === undefined) return '(none)'
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  return text.length > BRIEF_LENGTH ? `${text.slice(0, BRIEF_LENGTH - 1)}…` : text
}

function where(meta: LoopRequestMeta): string {
  return `session ${JSON.stringify(meta.sessionId)}, turn ${meta.turn} step ${meta.step} (lastSeq ${meta.lastSeq}, ${meta.messageCount} messages)`
}

function describeDifference(difference: RequestDifference): string {
  const seq = difference.seq === undefined ? '' : ` (seq ${difference.seq})`
  return `${difference.path}: request ${difference.request} ≠ log ${difference.log}${seq}`
}
