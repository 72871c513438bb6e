import type { AnySessionEvent } from '@deepseek-ai/dsh-session'

/**
 * The newest format `version` this package reads and writes. The version is
 * the `version` field of the `session/meta` event on line 1; a file with a
 * larger version is refused (R-PER-4) rather than misread.
 */
export const FORMAT_VERSION = 1

/**
 * One event as one line of JSON (without the newline):
 * `{"type":…,"seq":…,"time":…,"data":…}`, plus `"ignorable":true` when the
 * session marked the event safe to load by a process that does not know its
 * type (dsh-session sets `event.ignorable` for types registered as
 * ignorable). Only these fields are written, in this order. `JSON.stringify`
 * escapes line breaks inside strings, so a line never contains a newline byte.
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
