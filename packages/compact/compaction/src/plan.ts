import type { HistoryEntry } from './meter'

/** Where a compaction cuts the history. */
export interface CompactionPlan {
  /** The position of the first message (the range starts there, an earlier summary included). */
  readonly from: number
  /** The cut: a step boundary (a `turn/start` or `step/start` seq, or the log's end); the tail is positioned at or after it. */
  readonly to: number
  /** `entries[0, count)` are the range to replace. */
  readonly count: number
  /** How many of them are not an earlier summary's replacement. */
  readonly fresh: number
  readonly rangeTokens: number
  readonly tailTokens: number
}

/**
 * Chooses the range to compact (R-CMP-4): everything before the protected
 * tail, which is the longest run of newest messages within `tailBudget`
 * tokens (uncalibrated units) that starts at a step boundary. The cut is
 * always a `turn/start` or `step/start` seq, or `end` (the log's length,
 * with no step open), so a tool call and its results are never split and a
 * cut may fall inside the current turn. When even the newest step is over
 * the budget the tail is empty and the cut is `end`.
 *
 * Returns nothing when no message lies before the cut (the whole history
 * fits the budget).
 */
export function planRange(
  entries: readonly HistoryEntry[],
  boundaries: readonly number[],
  end: number,
  tailBudget: number,
): CompactionPlan | undefined {
  if (entries.length === 0) return undefined
  const from = entries[0]!.pos
  let index = entries.length
  let tail = 0
  let cut = end
  let cutIndex = entries.length
  let cutTail = 0
  for (let j = boundaries.length - 1; j >= 0; j--) {
    const candidate = boundaries[j]!
    if (candidate >= end) continue
    if (candidate <= from) {
      // A cut here would keep everything: when everything fits the budget, there is nothing to compact.
      let all = tail
      for (let i = 0; i < index; i++) all += entries[i]!.tokens
      if (all <= tailBudget) return undefined
      break
    }
    while (index > 0 && entries[index - 1]!.pos >= candidate) {
      index--
      tail += entries[index]!.tokens
    }
    if (tail > tailBudget) break
    cut = candidate
    cutIndex = index
    cutTail = tail
  }
  if (cutIndex === 0) return undefined
  let rangeTokens = 0
  let fresh = 0
  for (let i = 0; i < cutIndex; i++) {
    const entry = entries[i]!
    rangeTokens += entry.tokens
    if (!entry.kept) fresh++
  }
  return { from, to: cut, count: cutIndex, fresh, rangeTokens, tailTokens: cutTail }
}

/** The indices of the tool results among `entries[0, count)` of at least `minTokens` tokens: what pruning replaces. */
export function prunableResults(entries: readonly HistoryEntry[], count: number, minTokens: number): number[] {
  const found: number[] = []
  for (let i = 0; i < count; i++) {
    const entry = entries[i]!
    if (entry.tokens < minTokens) continue
    const content = entry.message.content
    if (entry.message.role === 'user' && content.length === 1 && content[0]!.type === 'tool-result') found.push(i)
  }
  return found
}
