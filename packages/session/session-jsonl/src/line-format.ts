import { SESSION_FORMAT_VERSION } from '@deepseek-ai/dsh-session'

/**
 * The newest format `version` this package reads and writes. The version is
 * the `version` field of the `session/meta` event on line 1; a file with a
 * larger version is refused (R-PER-4) rather than misread.
 */
export const FORMAT_VERSION = SESSION_FORMAT_VERSION

/** The stored line of one event: dsh-session's `serializeEvent`, which every backend shares. */
export { serializeEvent } from '@deepseek-ai/dsh-session'
