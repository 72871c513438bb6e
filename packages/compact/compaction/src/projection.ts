import type { Message } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'

/** The projection of a compaction's replacement, with its shadow always set. */
export interface ReplacementProjection {
  readonly messages: readonly Message[]
  readonly shadow: { readonly from: number; readonly to: number }
}

/**
 * The projector of `compaction/summary` and `compaction/prune` (R-CMP-5): the
 * stored replacement messages shadow the stored range.
 *
 * `from`/`to` are seqs of the log the event was written to, where the event
 * itself had seq `at`. A fork copies a log behind its own `session/meta`, so
 * every seq of the copy is shifted by the same amount; shifting the range by
 * `seq - at` keeps it on the same events. A pure function of the event, as a
 * projector must be: a resumed or forked session derives the same history.
 */
export function projectReplacement(event: SessionEvent<'compaction/summary' | 'compaction/prune'>): ReplacementProjection {
  const { from, to, at, messages } = event.data
  const shift = event.seq - at
  return { messages, shadow: { from: from + shift, to: to + shift } }
}
