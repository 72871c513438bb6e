import { SESSION_FORMAT_VERSION } from '@deepseek-ai/dsh-session'

/**
 * The newest session format `version` this package reads and writes (the
 * `version` of the log's `session/meta`), the same as dsh-session-jsonl's.
 */
export const FORMAT_VERSION = SESSION_FORMAT_VERSION

/** The stored line of one event: dsh-session's `serializeEvent`, which every backend shares. */
export { serializeEvent } from '@deepseek-ai/dsh-session'
