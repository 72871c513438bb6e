import type { AnySessionEvent } from '../types'

/**
 * One event as one line of JSON (without the newline), the stored form every
 * persistence backend writes: `{"type":…,"seq":…,"time":…,"data":…}`, plus
 * `"ignorable":true` when the session marked the event safe to load by a
 * process that does not know its type. Only these fields are written, in this
 * order. `JSON.stringify` escapes line breaks, NUL and lone surrogates, so a
 * line never contains a newline byte and is valid UTF-8 text. Backends share
 * this one function so that a session moves between them by copying lines
 * (dsh-session-jsonl writes it to a file, dsh-session-postgres to a `text`
 * column, byte for byte the same).
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
