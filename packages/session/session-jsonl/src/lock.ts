import { randomUUID } from 'node:crypto'
import { closeSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'
import { dirname, join } from 'node:path'
import { JsonlPersistenceError, errnoCode, fsError } from './errors'
import type { SessionPaths } from './session-paths'

/** What a lock file records about its owner. */
export interface LockOwner {
  pid: number
  hostname: string
  /** Unique per acquisition, so a release never removes someone else's lock. */
  token: string
  acquiredAt: number
}

/**
 * The lock files this process holds, by path. It lives on `globalThis` under a
 * registered symbol so that two copies of this package in one process (two
 * backends on one directory) still see each other's locks.
 */
const held: Map<string, string> = ((globalThis as Record<symbol, unknown>)[Symbol.for('dsh.session-jsonl.locks')] ??=
  new Map<string, string>()) as Map<string, string>

/**
 * The lock files this process holds, by token: the file's identity (device
 * and inode) when it was taken. The same file can be reached by another path
 * (a symlinked directory, an id differing in case on a case-insensitive file
 * system); read through it, a lock of ours is still live. A copy of the file
 * (another inode) is not ours.
 */
const heldFiles: Map<string, string> = ((globalThis as Record<symbol, unknown>)[Symbol.for('dsh.session-jsonl.lock-files')] ??=
  new Map<string, string>()) as Map<string, string>

/**
 * The right to write one session file. A session file has at most one writer:
 * the lock file next to it (`<id>.jsonl.lock`) names the owner's pid, host and
 * a token. A lock whose owner process is dead is stale and is recovered.
 */
export class SessionLock {
  private released = false

  constructor(
    readonly path: string,
    readonly owner: LockOwner,
  ) {}

  /**
   * Removes the lock file if it is still ours. Safe to call twice. A lock file
   * that now names another owner is left alone. Throws a
   * `JsonlPersistenceError` when the lock file cannot be read or removed; the
   * lock is released in this process all the same (a leftover file naming
   * this process is judged stale and recovered by the next writer).
   */
  release(): void {
    if (this.released) return
    this.released = true
    if (held.get(this.path) === this.owner.token) held.delete(this.path)
    heldFiles.delete(this.owner.token)
    const current = readOwner(this.path)
    if (current === 'missing' || current?.token !== this.owner.token) return
    unlinkQuietly(this.path, 'Removing the lock file')
  }

  /**
   * `release()` for error paths: a failure to remove the lock file must not
   * hide the error being reported, so it is returned instead of thrown.
   */
  releaseQuietly(): JsonlPersistenceError | undefined {
    try {
      this.release()
      return undefined
    } catch (error) {
      return fsError(error, { operation: 'write', file: this.path, doing: 'Removing the lock file' })
    }
  }
}

/**
 * Takes the lock of session `id` synchronously (so a `session/created` listener
 * can veto a session that another writer holds). The directory must exist.
 *
 * Throws `SESSION_LOCKED` when a live writer holds it: a live process on this
 * machine, a writer in this process, or any process on another machine (whose
 * liveness cannot be checked). A lock left by a dead process is broken under a
 * short-lived breaker lock, so two processes recovering it at once cannot both
 * win.
 */
export function acquireLock(paths: SessionPaths, id: string): SessionLock {
  const owner: LockOwner = { pid: process.pid, hostname: hostname(), token: randomUUID(), acquiredAt: Date.now() }
  for (let attempt = 0; attempt < 4; attempt++) {
    if (tryCreate(paths.lock, owner)) {
      held.set(paths.lock, owner.token)
      const identity = identityOf(paths.lock)
      if (identity !== undefined) heldFiles.set(owner.token, identity)
      return new SessionLock(paths.lock, owner)
    }
    const current = readOwner(paths.lock)
    if (current === 'missing') continue // released between our attempt and the read
    if (current && isAlive(current, paths.lock)) throw lockedError(id, paths.lock, current)
    breakStaleLock(paths, id, current)
  }
  throw new JsonlPersistenceError(
    'SESSION_LOCKED',
    `Could not take the lock of session "${id}" (${paths.lock}): other processes keep taking it. Try again.`,
    { file: paths.lock },
  )
}

/** Whether the lock file names a writer that is still running (as far as this machine can tell). */
export function isLockHeld(paths: SessionPaths): boolean {
  const current = readOwner(paths.lock)
  return current !== 'missing' && current !== undefined && isAlive(current, paths.lock)
}

function breakStaleLock(paths: SessionPaths, id: string, stale: LockOwner | undefined): void {
  const breaker: LockOwner = { pid: process.pid, hostname: hostname(), token: randomUUID(), acquiredAt: Date.now() }
  if (!tryCreate(paths.breaker, breaker)) {
    const other = readOwner(paths.breaker)
    if (other !== 'missing' && other !== undefined && isAlive(other, paths.breaker)) {
      throw new JsonlPersistenceError(
        'SESSION_LOCKED',
        `Session "${id}" is being recovered from a stale lock by process ${other.pid}; try again in a moment.`,
        { file: paths.lock },
      )
    }
    // A recoverer died while breaking the lock: its breaker is stale too.
    unlinkQuietly(paths.breaker, 'Removing a stale breaker lock')
    return
  }
  try {
    const again = readOwner(paths.lock)
    // Only remove the exact stale lock we judged; if it changed, the caller re-evaluates.
    if (again !== 'missing' && again?.token === stale?.token) unlinkQuietly(paths.lock, 'Removing a stale lock file')
  } finally {
    unlinkQuietly(paths.breaker, 'Removing the breaker lock')
  }
}

/**
 * Whether this process holds the lock file at `path` with `token`: taken under
 * that path, or under another path of the very same file (see `heldFiles`).
 */
function holds(path: string, token: string): boolean {
  if (held.get(path) === token) return true
  const identity = heldFiles.get(token)
  return identity !== undefined && identity === identityOf(path)
}

/** The device and inode of the file at `path`, or `undefined` when it cannot be read. */
function identityOf(path: string): string | undefined {
  try {
    const stats = statSync(path, { bigint: true })
    return `${stats.dev}:${stats.ino}`
  } catch {
    return undefined
  }
}

function isAlive(owner: LockOwner, path: string): boolean {
  if (owner.hostname !== hostname()) return true
  if (owner.pid === process.pid) return holds(path, owner.token)
  try {
    process.kill(owner.pid, 0)
    return true
  } catch (error) {
    return errnoCode(error) === 'EPERM'
  }
}

/**
 * Creates `path` holding `owner`, atomically: the content is written to a
 * private temporary file which is then hard-linked into place, so a reader
 * never sees a lock file without its owner.
 *
 * The temporary file's name does not contain the session id: with the id's
 * 200 characters, `.jsonl.lock`, a pid and a token it would pass the 255
 * bytes a file name may have (`ENAMETOOLONG`), and the longest ids could not
 * be opened at all. It is a hidden file in the same directory (a hard link
 * cannot cross file systems), named after the owner's pid and token.
 */
function tryCreate(path: string, owner: LockOwner): boolean {
  const temporary = join(dirname(path), `.dsh-lock-${owner.pid}-${owner.token}.tmp`)
  const doing = `Creating the lock file`
  const consequence = 'The session was not opened.'
  let fd: number
  try {
    fd = openSync(temporary, 'wx', 0o600)
  } catch (error) {
    // Named after the lock it was to become: the temporary name means nothing to the person reading it.
    throw fsError(error, { operation: 'write', file: path, doing, consequence })
  }
  try {
    try {
      writeSync(fd, JSON.stringify(owner))
    } finally {
      closeSync(fd)
    }
    linkSync(temporary, path)
  } catch (error) {
    // The error being reported matters more than a failure to clean up after it.
    try {
      unlinkSync(temporary)
    } catch {}
    if (errnoCode(error) === 'EEXIST') return false
    throw fsError(error, { operation: 'write', file: path, doing, consequence })
  }
  try {
    unlinkSync(temporary)
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') {
      // Leave nothing behind: give the lock back rather than keep it next to a stray file.
      try {
        unlinkSync(path)
      } catch {}
      throw fsError(error, { operation: 'write', file: temporary, doing: 'Removing the temporary lock file', consequence })
    }
  }
  return true
}

/** The owner recorded in a lock file; `undefined` when unreadable (treated as stale). */
function readOwner(path: string): LockOwner | 'missing' | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return 'missing'
    throw fsError(error, { operation: 'read', file: path, doing: 'Reading the lock file', consequence: 'Remove whatever is in the way of the lock file.' })
  }
  try {
    const value = JSON.parse(text) as Partial<LockOwner>
    if (typeof value.pid === 'number' && typeof value.hostname === 'string' && typeof value.token === 'string') {
      return value as LockOwner
    }
  } catch {
    // fall through: a lock file we cannot read names no live owner
  }
  return undefined
}

/** Removes `path` if it exists; throws a `JsonlPersistenceError` naming it otherwise. */
function unlinkQuietly(path: string, doing = 'Removing a lock file'): void {
  try {
    unlinkSync(path)
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw fsError(error, { operation: 'write', file: path, doing })
  }
}

function lockedError(id: string, path: string, owner: LockOwner): JsonlPersistenceError {
  const message =
    owner.pid === process.pid && owner.hostname === hostname()
      ? `Session "${id}" is already being written in this process (a live session with this id, or another sessionPersistence on the same directory). Dispose it before opening the session again.`
      : owner.hostname === hostname()
        ? `Session "${id}" is being written by process ${owner.pid} (lock file ${path}). Stop that process first; if no dsh process has that pid, delete the lock file.`
        : `Session "${id}" is locked by process ${owner.pid} on host "${owner.hostname}" (lock file ${path}); its liveness cannot be checked from here. Stop it there, or delete the lock file if that process is gone.`
  return new JsonlPersistenceError('SESSION_LOCKED', message, { file: path })
}
