import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { JsonlPersistenceError } from './errors'

/** The extension of a session file; a file `<id>.jsonl` holds session `<id>`. */
export const SESSION_FILE_EXTENSION = '.jsonl'

const SAFE_ID = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$/
// Device names Windows refuses as file names, with or without an extension.
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i

/**
 * Whether `id` can name a session file on every platform we run on: 1–200
 * characters of `A–Z a–z 0–9 . _ -`, not starting with `.` or `-`, and not a
 * Windows device name. This rules out path separators, `..`, hidden files and
 * anything a shell would need to quote.
 */
export function isSafeSessionId(id: unknown): id is string {
  return typeof id === 'string' && SAFE_ID.test(id) && !RESERVED.test(id)
}

/** Throws `INVALID_SESSION_ID` unless `id` is a safe file name. */
export function assertSafeSessionId(id: unknown): asserts id is string {
  if (isSafeSessionId(id)) return
  const shown = typeof id === 'string' ? JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id) : typeof id
  throw new JsonlPersistenceError(
    'INVALID_SESSION_ID',
    `Session id ${shown} cannot be used as a file name: use 1-200 characters of letters, digits, ".", "_" and "-", not starting with "." or "-".`,
  )
}

/**
 * Expands a leading `~` to the home directory and makes the path absolute.
 * Throws `NOT_A_DIRECTORY` for an empty (or blank) path: resolved, it would
 * be the working directory, and sessions (whatever the user and the model
 * wrote) would land in the project being worked on.
 */
export function resolveDirectory(directory: string): string {
  if (typeof directory !== 'string' || directory.trim() === '') {
    throw new JsonlPersistenceError(
      'NOT_A_DIRECTORY',
      `The session directory is empty (directory: ${JSON.stringify(directory)}); configure where session files live, e.g. "~/.dsh/sessions". An empty path would put them in the working directory (${process.cwd()}).`,
    )
  }
  if (directory === '~') return homedir()
  if (directory.startsWith('~/') || directory.startsWith('~\\')) return join(homedir(), directory.slice(2))
  return resolve(directory)
}

/** The files that belong to one session. */
export interface SessionPaths {
  /** The log: `<directory>/<id>.jsonl`. */
  readonly file: string
  /** The writer's lock: `<id>.jsonl.lock`, holding the owner's pid. */
  readonly lock: string
  /** Held briefly while a stale lock is broken, so two recoverers cannot both win. */
  readonly breaker: string
}

/** The paths of session `id` under `directory`; throws `INVALID_SESSION_ID` for an unsafe id. */
export function sessionPaths(directory: string, id: string): SessionPaths {
  assertSafeSessionId(id)
  const file = join(directory, id + SESSION_FILE_EXTENSION)
  return { file, lock: `${file}.lock`, breaker: `${file}.lock.break` }
}
