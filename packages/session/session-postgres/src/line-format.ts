import type { AnySessionEvent } from '@deepseek-ai/dsh-session'

/**
 * The newest session format `version` this package reads and writes (the
 * `version` of the log's `session/meta`), the same as dsh-session-jsonl's.
 */
export const FORMAT_VERSION = 1

/**
 * One event as the text a row stores: exactly the line dsh-session-jsonl
 * writes, without the newline (`{"type":…,"seq":…,"time":…,"data":…}`, plus
 * `"ignorable":true` for an event the session marked ignorable). The text is
 * stored as `text`, never `jsonb` (which would reorder keys and drop
 * duplicates), so what is read back is byte for byte what was written, and a
 * session can move between the two backends by copying lines.
 * `JSON.stringify` escapes NUL and lone surrogates, so the text is always
 * valid for a UTF-8 `text` column.
 *
 * Throws what `JSON.stringify` throws (a cycle, a BigInt).
 */
export function serializeEvent(event: AnySessionEvent): string {
  const ignorable = event.ignorable === true
  return (
    '{"type":' +
    JSON.stringify(event.type) +
    ',"seq":' +
    event.seq +
    ',"time":' +
    event.time +
    ',"data":' +
    JSON.stringify(event.data) +
    (ignorable ? ',"ignorable":true}' : '}')
  )
}
