import { open } from 'node:fs/promises'
import { SessionError, loadRepaired, type AnySessionEvent, type LoadedSession, type SessionLoadWarning } from '@deepseek-ai/dsh-session'
import { fsError } from './errors'
import type { EventTypeCatalog } from './event-types'
import { handovers } from './handover'
import { serializeEvent } from './line-format'
import { acquireLock } from './lock'
import { directoryExists, regularFileAt } from './path-state'
import { corrupt, notFound, readSessionFile } from './read-session-file'
import type { SessionPaths } from './session-paths'
import { cutTornTail } from './torn-tail'

export interface SessionFileLoad {
  id: string
  /** The session directory. */
  directory: string
  paths: SessionPaths
  types: EventTypeCatalog
  /** Abandons the load (see `SessionPersistence.load`). */
  signal?: AbortSignal
  /** Ends the load's turn in the per-id queue early (`PerIdQueue`): called once an abandoned load has let go of the file. */
  letGo(): void
  /**
   * Reports what nobody receives otherwise: a lock file that could not be removed (the load
   * stands; the next writer judges the lock stale), and a torn tail cut or repairs appended by a
   * load that then failed or was abandoned.
   */
  warn(error: unknown): void
}

/**
 * Loads one session file (R-PER-2, R-PER-3): takes its lock, streams it into
 * a `LoadedLog` (`readSessionFile`), cuts a torn tail after copying it to a
 * sidecar (`cutTornTail`), and appends the crash repairs (dsh-session's
 * `loadRepaired`, which plans them), fsynced. Then it records the file's end
 * as a `Handover` for the next writer and releases the lock.
 *
 * An aborted `signal` releases the lock and lets the per-id queue go at once
 * while the load is reading (the read stops after the read under way, and
 * the load writes nothing); during one of its writes (the cut, the repairs),
 * as soon as that write is done. Either way the load rejects with the
 * signal's reason (the queue's `abortable` rejects the caller's promise at
 * the moment of the abort).
 */
export async function loadSessionFile(load: SessionFileLoad): Promise<LoadedSession> {
  const { id, paths, signal } = load
  signal?.throwIfAborted()
  // Lock first: a session another writer holds but has not written yet is locked, not missing.
  if (!directoryExists(load.directory)) throw notFound(id, paths.file)
  const lock = acquireLock(paths, id)
  let writing = false
  let released = false
  const release = () => {
    if (released) return
    released = true
    // A lock file that cannot be removed is judged stale by the next writer; the load stands.
    const failure = lock.releaseQuietly()
    if (failure) load.warn(failure)
  }
  const onAbort = () => {
    if (writing) return
    release()
    load.letGo()
  }
  /** Runs one write of the load, unless it was abandoned: an abandoned load never writes. */
  const write = async <T>(work: () => Promise<T>): Promise<T> => {
    signal?.throwIfAborted()
    writing = true
    try {
      return await work()
    } finally {
      writing = false
    }
  }
  signal?.addEventListener('abort', onAbort, { once: true })
  try {
    if (!regularFileAt(paths.file, `the file of session "${id}"`)) throw notFound(id, paths.file)
    let validBytes = 0
    let repairBytes = 0
    /** The torn-tail warning once the tail is cut: if the load does not return it, it is logged (a cut is never silent). */
    let cut: SessionLoadWarning | undefined
    const loading = loadRepaired(
      id,
      {
        read: async (log) => {
          const contents = await readSessionFile(paths.file, id, load.types, log, signal)
          validBytes = contents.validBytes
          if (!contents.torn) return []
          const sidecar = await write(() => cutTornTail(paths.file, contents.validBytes))
          cut = tornTail(paths.file, contents.torn, sidecar)
          return [cut]
        },
        appendRepairs: (events) =>
          write(async () => {
            repairBytes = await appendLines(paths.file, events)
          }),
      },
      signal === undefined ? {} : { signal },
    ).catch((error: unknown) => {
      // Crash repair found a stored event it cannot read (it checks what it reads before planning
      // anything, so nothing was appended): name its line, as for any other damaged line.
      if (error instanceof SessionError && error.code === 'INVALID_EVENT' && error.seq !== undefined) {
        throw corrupt(paths.file, error.seq + 1, `is not a valid event: ${error.message}`)
      }
      throw error
    })
    let loaded: LoadedSession
    try {
      loaded = await loading
    } catch (error) {
      if (cut) load.warn(`${cut.message} The load that cut it ${signal?.aborted && error === signal.reason ? 'was abandoned' : 'failed'}, so this is the only report of the cut.`)
      throw error
    }
    // Abandoned during its last write: the caller has its rejection, so what was done is logged.
    if (signal?.aborted) reportAbandoned(loaded, paths.file, load.warn)
    const { events } = loaded
    const last = events[events.length - 1]!
    handovers.set(paths.file, { count: events.length, size: validBytes + repairBytes, lastType: last.type, lastTime: last.time })
    return loaded
  } finally {
    signal?.removeEventListener('abort', onAbort)
    release()
  }
}

/** Logs what an abandoned load did that no caller receives: the torn tail it cut, the repairs it appended. */
function reportAbandoned(loaded: LoadedSession, file: string, warn: (message: string) => void): void {
  for (const warning of loaded.warnings) warn(`${warning.message} The load that cut it was abandoned, so this is the only report of the cut.`)
  const { repairs } = loaded
  if (repairs.length === 0) return
  const count = repairs.length === 1 ? '1 crash repair' : `${repairs.length} crash repairs`
  const span = repairs.length === 1 ? `seq ${repairs[0]!.seq}` : `seq ${repairs[0]!.seq} to ${repairs.at(-1)!.seq}`
  warn(`Appended ${count} (${span}: ${repairs.map((repair) => repair.type).join(', ')}) to ${file} for a load that was abandoned; the next load of the session starts from them.`)
}

function tornTail(file: string, torn: { line: number; bytes: number }, sidecar: string): SessionLoadWarning {
  const { line, bytes } = torn
  return {
    code: 'TORN_TAIL',
    message: `Dropped a torn last line (line ${line}, ${bytes} bytes without a final newline) of ${file}: its writer stopped mid-write, after its last flush. The bytes were copied to ${sidecar}; the file now ends at the last complete event.`,
    file,
    line,
    sidecar,
  }
}

/** Appends `events` (the crash repairs) to the file as lines, fsynced; returns the bytes written. */
async function appendLines(file: string, events: readonly AnySessionEvent[]): Promise<number> {
  const bytes = Buffer.from(events.map(serializeEvent).join('\n') + '\n', 'utf8')
  try {
    const handle = await open(file, 'a', 0o600)
    try {
      let offset = 0
      while (offset < bytes.length) offset += (await handle.write(bytes, offset, bytes.length - offset)).bytesWritten
      await handle.datasync()
    } finally {
      await handle.close()
    }
  } catch (error) {
    throw fsError(error, {
      operation: 'write',
      file,
      doing: 'Appending the crash repairs',
      consequence: 'The session was not loaded; the next load repairs it again.',
    })
  }
  return bytes.length
}
