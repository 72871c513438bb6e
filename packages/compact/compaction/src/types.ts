import type { Message, TokenUsage, ToolSchema } from '@deepseek-ai/dsh-llm'

/** Why a compaction ran: the meter's pressure, a provider's `CONTEXT_OVERFLOW`, or a caller of `compact()`. */
export type CompactionReason = 'pressure' | 'overflow' | 'manual'

/** The kind of replacement a compaction wrote: stubs for old large tool results, or a summary. */
export type CompactionKind = 'summary' | 'prune'

/** The user messages a summary keeps verbatim, as stored in its event. */
export interface KeptUserMessages {
  /** The text of each kept message, oldest first (non-text blocks shown as `[image]` and the like). */
  readonly kept: readonly string[]
  /** How many older user messages did not fit the budget, counting those earlier summaries left out. */
  readonly omitted: number
  /** Their estimated size in tokens (uncalibrated estimator units). */
  readonly omittedTokens: number
}

/** One tool result a prune replaced by a stub. */
export interface PrunedResult {
  readonly callId: string
  readonly name: string
  /** Its estimated size in tokens (uncalibrated estimator units). */
  readonly tokens: number
  readonly characters: number
}

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    /**
     * Log-only: a compaction starts. `reason` says what set it off and `why`
     * says it in words, with the figures (estimate, window, threshold).
     * `[from, to)` is the range of history positions (seqs of this log) it
     * means to replace; `to` is a step boundary, and what is positioned at or
     * after it is the protected tail. Followed by exactly one
     * `compaction/summary`, `compaction/prune` or `compaction/failed`, unless
     * the process stopped first (a resume then writes `compaction/failed`
     * with code `INTERRUPTED`). Registered ignorable.
     */
    'compaction/start': {
      reason: 'pressure' | 'overflow' | 'manual'
      from: number
      to: number
      /** The meter's estimate of the next request, in tokens, when it started. */
      estimatedTokens: number
      /** The model's context window it compacts for, when known. */
      window?: number
      why: string
      /** The turn and step about to open, for a compaction run between steps. */
      turn?: number
      step?: number
      /** A manual compaction's instructions for the summary. */
      instructions?: string
    }
    /**
     * Model-visible (not ignorable): the summary of a compaction. Its
     * projector replaces the history positioned in `[from, to)` with
     * `messages` (one user-role message holding the summary, the user's
     * messages of the range verbatim, the latest todo list and the last
     * assistant conclusion), so a resumed session derives exactly what the
     * live one did. `from`/`to` are seqs of the log the event was written to,
     * at seq `at`; in a fork (whose copy of the log is shifted) the projector
     * shifts them by `seq - at`. `usage` sums the summarizer's own calls,
     * which are not part of the history; `route` is the model that wrote it.
     * A process without dsh-compaction refuses to load a session holding it.
     */
    'compaction/summary': {
      from: number
      to: number
      at: number
      summary: string
      messages: Message[]
      userMessages: KeptUserMessages
      usage: TokenUsage
      calls: number
      route: { provider: string; model: string }
      tokensBefore: number
      tokensAfter: number
    }
    /**
     * Model-visible (not ignorable): a model-free compaction. Its projector
     * replaces the history positioned in `[from, to)` with `messages`: the
     * same messages, except that each tool result listed in `pruned` is a
     * stub that names the tool, the call and the elided size. `at` as in
     * `compaction/summary`.
     */
    'compaction/prune': {
      from: number
      to: number
      at: number
      messages: Message[]
      pruned: PrunedResult[]
      tokensBefore: number
      tokensAfter: number
    }
    /**
     * Log-only: the compaction that started last did not replace anything
     * (the summary call failed or was cancelled, the summary came out no
     * smaller than the range: `NOT_SMALLER`, the log refused it, or the
     * process stopped: `INTERRUPTED`). Nothing was shadowed and no history
     * was lost. `usage` and `calls` are the summarizer's, when a summary was
     * written but not used, and `route` the model that wrote it (so a cost
     * meter can price those calls). Registered ignorable.
     */
    'compaction/failed': { code: string; message: string; usage?: TokenUsage; calls?: number; route?: { provider: string; model: string } }
  }
}

/**
 * Counts tokens for the meter. The default (`defaultEstimator`) counts
 * characters / 4; replace it with a real tokenizer through
 * `ctx.compaction.setEstimator`. Both functions must be pure and cheap: the
 * meter calls `message` once per message appended and `header` once per
 * request header change.
 */
export interface TokenEstimator {
  /** The tokens one history message adds to a request. */
  message(message: Message): number
  /** The tokens of a request's system text and tool schemas. */
  header(system: string, tools: readonly ToolSchema[]): number
}

/** What `ctx.compaction.status(agent)` reports. */
export interface CompactionStatus {
  /** The meter's estimate of the agent's next request, in tokens. */
  readonly estimatedTokens: number
  /** The model's context window (config or the adapter's `contextWindow`); absent while unknown. */
  readonly window?: number
  /** The window minus the tokens reserved for the answer. */
  readonly usableWindow?: number
  /** `estimatedTokens / window`: the share of the window used. */
  readonly share?: number
  /** The estimate above which a compaction runs: `threshold × usableWindow`. */
  readonly limit?: number
  readonly threshold: number
  /** How many compactions (summaries and prunes) this session's log holds. */
  readonly compactions: number
  /** The last one, if any. */
  readonly last?: CompactionRecord
  /** A compaction that will run at the agent's next step, and why. */
  readonly pending?: CompactionReason
  /** A compaction is running now. */
  readonly running: boolean
}

/** One compaction as the log records it. */
export interface CompactionRecord {
  readonly kind: CompactionKind
  readonly reason: CompactionReason
  /** The seq of its `compaction/summary` or `compaction/prune` event. */
  readonly seq: number
  readonly tokensBefore: number
  readonly tokensAfter: number
}

/**
 * Why a compaction replaced nothing although nothing went wrong:
 * `NOTHING_TO_COMPACT` (the whole history is within the protected tail),
 * `NOT_SMALLER` (a summary would not be, or came out not, smaller than what
 * it replaces), `RUNNING` (a compaction of the agent is already running).
 */
export type CompactionSkipCode = 'NOTHING_TO_COMPACT' | 'NOT_SMALLER' | 'RUNNING'

/** A compaction that replaced nothing, and why (`CompactionResult`). */
export interface CompactionSkipped {
  readonly kind: 'skipped'
  readonly reason: CompactionReason
  readonly code: CompactionSkipCode
  /** The reason in words, with the figures. */
  readonly why: string
  /**
   * The seq of the `compaction/failed` that records it, when the compaction
   * got as far as the log: a summary was written (its usage is in that
   * event) and came out no smaller than the range. Absent when it was
   * decided before anything was logged.
   */
  readonly seq?: number
}

/**
 * What `ctx.compaction.compact()` resolves to: the record of what it
 * replaced, or `skipped` when it replaced nothing for a reason that is not a
 * failure (the history is already as small as a compaction can make it).
 * Failures (the summary call failed, an abort, a refused write) reject with
 * a `CompactionError` instead.
 */
export type CompactionResult = (CompactionRecord & { readonly from: number; readonly to: number }) | CompactionSkipped

export interface CompactOptions {
  /** Extra instructions for the summary ("keep the API decisions"); they go into the summarizer's request. */
  instructions?: string
  /** Aborts the compaction (the summary call too); nothing is shadowed then. */
  signal?: AbortSignal
}
