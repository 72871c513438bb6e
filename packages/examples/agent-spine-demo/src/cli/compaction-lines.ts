import type { CompactionResult, CompactionStatus } from '@deepseek-ai/dsh-compaction'
import type { SessionEventMap } from '@deepseek-ai/dsh-session'
import { clip } from './text'

const number = (n: number) => n.toLocaleString('en-US')

/** The share of the model's window the agent's next request would use, for a turn's summary line; undefined while the window is unknown. */
export function contextShare(status: CompactionStatus): string | undefined {
  if (status.window === undefined || status.share === undefined) return undefined
  return `context ${Math.round(status.share * 100)}% of ${number(status.window)}`
}

/** The line a compaction's outcome prints: what it did, the size before and after, and why it ran. */
export function compactionLine(
  start: SessionEventMap['compaction/start'] | undefined,
  type: 'compaction/summary' | 'compaction/prune' | 'compaction/failed',
  data: SessionEventMap['compaction/summary' | 'compaction/prune' | 'compaction/failed'],
): string {
  const reason = start ? ` (${start.reason})` : ''
  const why = start ? ` · ${clip(start.why, 200)}` : ''
  if (type === 'compaction/failed') {
    const failed = data as SessionEventMap['compaction/failed']
    // Not a failure: the history is already about as small as a summary can make it.
    if (failed.code === 'NOT_SMALLER') return `· not compacted${reason}: ${clip(failed.message, 200)}`
    return `· compaction${reason} failed: ${failed.code}: ${clip(failed.message, 200)} (nothing was lost)`
  }
  const done = data as SessionEventMap['compaction/summary' | 'compaction/prune']
  const what = type === 'compaction/summary' ? 'summarized the older history' : `pruned ${(done as SessionEventMap['compaction/prune']).pruned.length} old tool result(s)`
  return `· compacted${reason}: ${what}, about ${number(done.tokensBefore)} → ${number(done.tokensAfter)} tokens${why}`
}

/**
 * What `/compact` says when it wrote nothing to the log (a compaction, or a summary that came out
 * no smaller, logs an outcome, and the turn view prints its line).
 */
export function skippedLine(result: CompactionResult): string | undefined {
  return result.kind === 'skipped' && result.seq === undefined ? `· ${result.why}` : undefined
}
