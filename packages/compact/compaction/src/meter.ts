import type { Message, ToolSchema } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent, EventTypeInfo, Session, SessionEvent, SessionEventMap, Todo } from '@deepseek-ai/dsh-session'
import { defaultEstimator } from './estimator'
import { projectReplacement } from './projection'
import type { CompactionReason, CompactionRecord, KeptUserMessages, TokenEstimator } from './types'

/** One message of the derived history, as the meter tracks it. */
export interface HistoryEntry {
  readonly message: Message
  /** Its history position: the seq of the event that produced it, or a replacement's `from` (R-SES-3). */
  readonly pos: number
  /** Its estimated size (uncalibrated estimator units). */
  tokens: number
  /** For a summary's replacement message: what it kept of the user's messages. */
  readonly kept?: KeptUserMessages
}

/** The lowest calibration: the estimator's own figure. The highest: 8 estimated tokens per reported one. */
const MIN_CALIBRATION = 1
const MAX_CALIBRATION = 8
/** Below this many estimated input tokens a request says too little about the estimator to calibrate it. */
const CALIBRATION_FLOOR = 64

/**
 * The token meter of one session (R-CMP-1), and the index of its derived
 * history that compaction plans with.
 *
 * It reads the session's log forward, once (`update()` costs O(new events);
 * streamed chunks are skipped by type without being read), and keeps:
 *
 * - a replica of the derived history with each message's position and
 *   estimated size (the projection rules of dsh-session for the built-in
 *   types and the compaction events; a merged type with another projector is
 *   replayed through `typeInfo`);
 * - the step boundaries (`turn/start` and `step/start` seqs), where a
 *   compaction may cut;
 * - the last reported usage of a model call and what was appended since.
 *
 * The estimate of the next request is the last request's reported size
 * (input + cache-read + cache-write + output, which the adapters report
 * without overlap; a report without any input counts as no report) plus
 * the estimate of every change since: the messages
 * appended, less what a compaction removed and plus its replacement. Before
 * the first usage it is the estimate of the request header plus the whole
 * history.
 *
 * The estimator is calibrated against the provider: at each reported usage
 * the meter compares the reported input with its own estimate of the same
 * request, and scales later estimates by that ratio (never below 1, at most
 * 8), so that a text the estimator undercounts (code, CJK) does not let the
 * next request overshoot.
 */
export class TokenMeter {
  /** The derived history, oldest first (read-only for callers). */
  entries: HistoryEntry[] = []
  /** The seqs of `turn/start` and `step/start` events, ascending: where a cut keeps every tool call with its result. */
  readonly boundaries: number[] = []
  /** The sum of the entries' tokens. */
  historyTokens = 0
  /** The estimate of the system text and tools of the last `request/header`. */
  headerTokens = 0
  /** The route of the last `request/header`. */
  route: { readonly provider: string; readonly model: string } | undefined
  /** Reported tokens per estimated token, from the last usable report. */
  calibration = 1
  /** The latest todo list (`todo/write`). */
  todos: readonly Todo[] | undefined
  /** How many compactions the log holds. */
  compactions = 0
  last: CompactionRecord | undefined
  /** A `compaction/start` not yet followed by its outcome. */
  openStart: SessionEvent<'compaction/start'> | undefined

  private next = 0
  /** The last reported request size, and the number of entries the history had right after that answer. */
  private usage: { total: number; entries: number } | undefined
  /** Tokens of the entries appended since `usage`, less those a shadow removed since (so it may be negative). */
  private sinceUsage = 0
  /** A shadow changed the history since `usage`: `sinceUsage` no longer maps to a run of entries. */
  private shadowedSinceUsage = false
  private header: SessionEventMap['request/header'] | undefined
  private lastReason: CompactionReason = 'pressure'

  constructor(
    readonly session: Session,
    private estimator: TokenEstimator = defaultEstimator,
    private readonly typeInfo?: (type: string) => EventTypeInfo | undefined,
  ) {}

  /** Reads the events appended since the last call (up to `end`, by default the whole log). */
  update(end?: number): void {
    const session = this.session
    const events = session.events
    const length = end === undefined ? events.length : Math.min(end, events.length)
    let seq = this.next
    if (seq >= length) return
    for (; seq < length; seq++) {
      // Decided by type where that is enough: reading an entry of the log costs more than its type.
      switch (session.typeAt(seq)) {
        case 'assistant/chunk':
        case 'step/end':
        case 'turn/end':
        case 'tool/call':
        case 'session/meta':
        case 'inbox/enqueue':
        case 'inbox/dequeue':
        case 'inbox/discard':
        case 'inbox/requeue':
          continue
        case 'turn/start':
        case 'step/start':
          this.boundaries.push(seq)
          continue
        default:
          this.read(events[seq]!, seq)
      }
    }
    this.next = length
  }

  /** The estimate of the next request, in tokens (calibrated). */
  estimate(): number {
    return this.estimateAfter(0)
  }

  /**
   * The estimate once the history changes by `delta` estimated tokens
   * (uncalibrated; a compaction's replacement less what it removes): exactly
   * what `estimate()` will say after that change is read.
   */
  estimateAfter(delta: number): number {
    if (this.usage) return Math.max(0, this.usage.total + Math.ceil(this.calibration * (this.sinceUsage + delta)))
    return Math.ceil(this.calibration * (this.headerTokens + this.historyTokens + delta))
  }

  /** The estimate with `messages` appended (a step's proposed batch). */
  estimateWith(messages: readonly Message[]): number {
    let extra = 0
    for (const message of messages) extra += this.estimator.message(message)
    return this.estimate() + Math.ceil(this.calibration * extra)
  }

  /** Estimated (uncalibrated) tokens of one message with the current estimator. */
  count(message: Message): number {
    return this.estimator.message(message)
  }

  /** Switches to another estimator: every tracked size is counted again. */
  setEstimator(estimator: TokenEstimator): void {
    if (estimator === this.estimator) return
    this.estimator = estimator
    // What a shadow removed was counted with the old estimator: start again from the whole history.
    if (this.shadowedSinceUsage) this.usage = undefined
    let total = 0
    let since = 0
    const start = this.usage?.entries ?? this.entries.length
    for (let i = 0; i < this.entries.length; i++) {
      const entry = this.entries[i]!
      entry.tokens = estimator.message(entry.message)
      total += entry.tokens
      if (i >= start) since += entry.tokens
    }
    this.historyTokens = total
    this.sinceUsage = since
    this.headerTokens = this.header ? estimator.header(this.header.system, this.header.tools) : 0
  }

  /** Whether this meter uses `estimator`. */
  uses(estimator: TokenEstimator): boolean {
    return this.estimator === estimator
  }

  private read(event: AnySessionEvent, seq: number): void {
    switch (event.type) {
      case 'user/message':
      case 'steering/message':
      case 'tool/result':
        this.add(seq, event.data.message)
        return
      case 'assistant/message': {
        const data = event.data
        // A report of no input at all (a gateway's zeros, or only the output: the adapters map a missing
        // count to 0) says nothing about the request, which always has some: the estimate stands.
        const usage = data.usage && data.usage.inputTokens + (data.usage.cacheReadTokens ?? 0) + (data.usage.cacheWriteTokens ?? 0) > 0 ? data.usage : undefined
        if (usage) this.calibrate(usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0))
        if (data.message.content.length > 0) this.add(seq, data.message)
        if (usage) {
          const total = usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0) + usage.outputTokens
          const last = (this.usage ??= { total, entries: 0 })
          last.total = total
          last.entries = this.entries.length
          this.sinceUsage = 0
          this.shadowedSinceUsage = false
        }
        return
      }
      case 'request/header':
        this.header = event.data
        this.headerTokens = this.estimator.header(event.data.system, event.data.tools as readonly ToolSchema[])
        this.route = { provider: event.data.provider, model: event.data.model }
        return
      case 'todo/write':
        this.todos = event.data.todos
        return
      case 'compaction/start':
        this.openStart = event as SessionEvent<'compaction/start'>
        this.lastReason = event.data.reason
        return
      case 'compaction/summary':
      case 'compaction/prune': {
        const data = event.data
        const projection = projectReplacement(event as SessionEvent<'compaction/summary' | 'compaction/prune'>)
        const kept = event.type === 'compaction/summary' ? (data as SessionEventMap['compaction/summary']).userMessages : undefined
        this.shadow(projection.shadow.from, projection.shadow.to, projection.messages, kept)
        this.compactions++
        this.last = {
          kind: event.type === 'compaction/summary' ? 'summary' : 'prune',
          reason: this.openStart?.data.reason ?? this.lastReason,
          seq,
          tokensBefore: data.tokensBefore,
          tokensAfter: data.tokensAfter,
        }
        this.openStart = undefined
        return
      }
      case 'compaction/failed':
        this.openStart = undefined
        return
      case 'session/meta':
      case 'turn/end':
      case 'step/end':
      case 'tool/call':
      case 'inbox/enqueue':
      case 'inbox/dequeue':
      case 'inbox/discard':
      case 'inbox/requeue':
        return
      default:
        this.readOther(event)
    }
  }

  /** A merged type of another plugin: replayed through its registered projector, if it has one. */
  private readOther(event: AnySessionEvent): void {
    const info = this.typeInfo?.(event.type)
    if (!info || info.builtIn || typeof info.projector !== 'function') return
    const projection = info.projector(event, this.session)
    if (!projection) return
    const messages = projection.messages ?? []
    if (projection.shadow) this.shadow(projection.shadow.from, projection.shadow.to, messages, undefined)
    else for (const message of messages) this.add(event.seq, message)
  }

  private add(pos: number, message: Message, kept?: KeptUserMessages): void {
    const tokens = this.estimator.message(message)
    this.entries.push(kept ? { message, pos, tokens, kept } : { message, pos, tokens })
    this.historyTokens += tokens
    this.sinceUsage += tokens
  }

  /** A projection that replaces the entries positioned in `[from, to)` (dsh-session's `DerivedHistory.replace`). */
  private shadow(from: number, to: number, messages: readonly Message[], kept: KeptUserMessages | undefined): void {
    const entries = this.entries
    const lo = lowerBound(entries, from)
    const hi = lowerBound(entries, to)
    if (lo === hi && hi === entries.length) {
      // Nothing removed and nothing after: still append-only.
      for (const message of messages) this.add(from, message, kept)
      return
    }
    const next = entries.slice(0, lo)
    let removed = 0
    for (let i = lo; i < hi; i++) removed += entries[i]!.tokens
    let added = 0
    for (const message of messages) {
      const tokens = this.estimator.message(message)
      next.push(kept ? { message, pos: from, tokens, kept } : { message, pos: from, tokens })
      added += tokens
    }
    for (let i = hi; i < entries.length; i++) next.push(entries[i]!)
    this.entries = next
    this.historyTokens += added - removed
    // The last report stays the baseline; the shadow is one more change since (a negative one).
    this.sinceUsage += added - removed
    if (this.usage) this.shadowedSinceUsage = true
    // Boundaries before the first message can never be cuts again.
    const first = next.length ? next[0]!.pos : to
    let drop = 0
    while (drop < this.boundaries.length && this.boundaries[drop]! <= first) drop++
    if (drop > 0) this.boundaries.splice(0, drop)
  }

  /** Calibrates against a reported request input, compared with the estimate of the same request. */
  private calibrate(reportedInput: number): void {
    const estimated = this.headerTokens + this.historyTokens
    if (estimated < CALIBRATION_FLOOR || reportedInput <= 0) return
    const ratio = reportedInput / estimated
    this.calibration = Math.min(MAX_CALIBRATION, Math.max(MIN_CALIBRATION, ratio))
  }
}

/** The first index whose entry is positioned at or after `pos`. */
export function lowerBound(entries: readonly HistoryEntry[], pos: number): number {
  let lo = 0
  let hi = entries.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (entries[mid]!.pos < pos) lo = mid + 1
    else hi = mid
  }
  return lo
}
