import { mkdirSync } from 'node:fs'
import type { Session } from '@deepseek-ai/dsh-session'
import { JsonlPersistenceError, errnoCode, fsError } from './errors'
import { mayHoldEventsSync } from './first-line'
import { handovers, type Handover } from './handover'
import { acquireLock } from './lock'
import { notADirectory, regularFileAt } from './path-state'
import type { SessionPaths } from './session-paths'
import { SessionWriter } from './session-writer'
import { createdDirectories } from './sync-directory'
import { cutTornTailSync } from './torn-tail'

/** Lines per write call: large enough to amortize the syscall, small enough to keep the batch short. */
const BATCH_LINES = 4096

export interface OpenWriter {
  id: string
  directory: string
  paths: SessionPaths
  /** The seq of the first event a direct append brings (a live session brings its whole log). */
  firstSeq: number
  /** The live session the writer will serve, if any. */
  session?: Session
  flushIntervalMs: number
  /** Reports what nobody awaits: the writer's failure when it happens, a file started over. */
  warn(error: unknown): void
}

/**
 * Opens session `id` for writing: takes its lock (synchronously, so a
 * `session/created` listener can veto) and decides where the writer
 * continues. A missing file (or one that provably holds no event) starts
 * fresh; an existing file is continued only from a handover this process
 * recorded, and only if the file is unchanged since. A live `session` must
 * extend the handover's log; a direct append must start (`firstSeq`) right
 * after it.
 *
 * Throws `SESSION_EXISTS` (a file this process did not load, or a new log
 * from seq 0 over one it did), `SESSION_CHANGED` (it changed since),
 * `INVALID_APPEND` (a new file whose first append is not seq 0, or a direct
 * append that does not start where a loaded file ends), `SESSION_LOCKED`, or the typed error of a file
 * system failure; the lock is released again on every throw.
 */
export function openWriter(open: OpenWriter): SessionWriter {
  const { id, paths } = open
  makeDirectory(open.directory)
  const lock = acquireLock(paths, id)
  try {
    let persisted = 0
    let size = 0
    let creates = true
    const current = regularFileAt(paths.file, `the file of session "${id}"`)
    if (current && mayHoldEvents(paths.file)) {
      const handover = handovers.get(paths.file)
      if (!handover) throw existsError(id, paths.file)
      if (handover.size !== current.size) {
        throw new JsonlPersistenceError(
          'SESSION_CHANGED',
          `Session file ${paths.file} changed on disk since this process last read or wrote it; load session "${id}" again before writing it.`,
          { file: paths.file },
        )
      }
      if (open.session === undefined && open.firstSeq !== 0 && open.firstSeq !== handover.count) {
        // A direct append that continues the loaded file, from the wrong place (a retried batch
        // whose events are already there, or a gap): the file is this session's, the seq is wrong.
        throw new JsonlPersistenceError(
          'INVALID_APPEND',
          `Cannot append to session "${id}": its file holds ${handover.count} events (seq 0 to ${handover.count - 1}) as this process last loaded or wrote it, so the next append must start at seq ${handover.count}, not ${open.firstSeq}. Nothing was queued.`,
          { file: paths.file },
        )
      }
      if (!continues(handover, open.session, open.firstSeq)) throw existsError(id, paths.file)
      persisted = handover.count
      size = handover.size
      creates = false
    } else if (current) {
      // The writer died before its first line: nothing was ever durable. Start over, keeping
      // whatever it left in a sidecar.
      if (current.size > 0) {
        const sidecar = cutTornTailSync(paths.file, 0)
        open.warn(
          `Session file ${paths.file} held no complete line (its writer stopped before its first flush); its ${current.size} bytes were moved to ${sidecar} and the file starts over.`,
        )
      }
    } else if (open.firstSeq !== 0 && open.session === undefined) {
      throw new JsonlPersistenceError(
        'INVALID_APPEND',
        `Session "${id}" has no file yet, so its first append must start with session/meta at seq 0 (got seq ${open.firstSeq}).`,
        { file: paths.file },
      )
    }
    handovers.delete(paths.file)
    return new SessionWriter({
      id,
      file: paths.file,
      lock,
      persisted,
      size,
      creates,
      flushIntervalMs: open.flushIntervalMs,
      batchLines: BATCH_LINES,
      onFail: (error) => open.warn(error),
    })
  } catch (error) {
    const released = lock.releaseQuietly()
    if (released) open.warn(released)
    throw error
  }
}

/** Creates the session directory (mode 0700) if it is missing; the new directories' entries are synced with the first file's. */
function makeDirectory(directory: string): void {
  try {
    const first = mkdirSync(directory, { recursive: true, mode: 0o700 })
    if (first !== undefined) createdDirectories(first, directory)
  } catch (error) {
    const errno = errnoCode(error)
    if (errno === 'EEXIST' || errno === 'ENOTDIR') throw notADirectory(directory, error)
    throw fsError(error, { operation: 'write', file: directory, doing: 'Creating the session directory' })
  }
}

function continues(handover: Handover, session: Session | undefined, firstSeq: number): boolean {
  if (session) {
    const last = session.events[handover.count - 1]
    return last !== undefined && last.type === handover.lastType && last.time === handover.lastTime
  }
  return firstSeq === handover.count
}

function existsError(id: string, file: string): JsonlPersistenceError {
  return new JsonlPersistenceError(
    'SESSION_EXISTS',
    `A session file for "${id}" already exists (${file}); writing a new log into it would corrupt it. Resume it (load it first), delete it, or pick another id.`,
    { file },
  )
}

/** `mayHoldEventsSync` with its failures typed. */
function mayHoldEvents(file: string): boolean {
  try {
    return mayHoldEventsSync(file)
  } catch (error) {
    throw fsError(error, { operation: 'read', file, doing: 'Reading the first line of the session file' })
  }
}
