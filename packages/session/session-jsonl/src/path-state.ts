import { statSync } from 'node:fs'
import { JsonlPersistenceError, errnoCode, fsError } from './errors'

/**
 * The regular file at `path`: its size, or `undefined` when nothing is
 * there. Throws `NOT_A_FILE` when something else (a directory, a FIFO, a
 * device) is in its place, so a directory where a session file should be is
 * never taken for a missing session; other failures (`ENOTDIR`, `EACCES`, …)
 * throw their typed `JsonlPersistenceError` naming the path.
 */
export function regularFileAt(path: string, what: string): { size: number } | undefined {
  let stats
  try {
    stats = statSync(path)
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined
    throw fsError(error, { operation: 'read', file: path, doing: `Looking up ${what}` })
  }
  if (stats.isFile()) return stats
  throw new JsonlPersistenceError(
    'NOT_A_FILE',
    `${capitalize(what)} ${path} is not a regular file (${stats.isDirectory() ? 'a directory' : 'a special file'} is in its place); move it away before using this session.`,
    { file: path },
  )
}

/**
 * Whether the directory at `path` exists. Throws `NOT_A_DIRECTORY` when a
 * file is in its place (or in the place of one of its parents), and a typed
 * error for any other failure.
 */
export function directoryExists(path: string): boolean {
  let stats
  try {
    stats = statSync(path)
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false
    throw fsError(error, { operation: 'read', file: path, doing: 'Looking up the session directory' })
  }
  if (stats.isDirectory()) return true
  throw notADirectory(path)
}

/** `NOT_A_DIRECTORY` for the session directory `path`. */
export function notADirectory(path: string, cause?: unknown): JsonlPersistenceError {
  return new JsonlPersistenceError(
    'NOT_A_DIRECTORY',
    `The session directory ${path} is not a directory (a file is in its place, or in the place of one of its parents); configure another directory or move the file away.`,
    cause === undefined ? { file: path } : { file: path, cause, ...errnoOf(cause) },
  )
}

function errnoOf(error: unknown): { errno?: string } {
  const errno = errnoCode(error)
  return errno === undefined ? {} : { errno }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
