import { isUtf8 } from 'node:buffer'
import { open, type FileHandle } from 'node:fs/promises'
import type { LoadedLog } from '@deepseek-ai/dsh-session'
import { JsonlPersistenceError, errnoCode, fsError } from './errors'
import type { EventTypeCatalog } from './event-types'
import { FORMAT_VERSION } from './line-format'

/** What reading a session file found, before any repair (the events themselves went into the `LoadedLog`). */
export interface SessionFileContents {
  /** The byte length of the valid prefix: everything up to the last accepted line's newline. */
  validBytes: number
  /**
   * The torn tail, when the file does not end with a newline: the bytes after
   * the last newline (from `validBytes` to the end), which is the line
   * numbered `line` that its writer never finished. The caller cuts it.
   */
  torn?: { line: number; bytes: number }
}

const NEWLINE = 0x0a
const READ_CHUNK = 256 * 1024

/**
 * Streams a session file line by line (never the whole file as one string)
 * into `log` (dsh-session's `LoadedLog`: chunks are packed as they are read,
 * so the load never holds the whole log as objects), and validates each line
 * as it goes (R-PER-2, R-PER-4):
 *
 * - every line is one JSON object `{ type, seq, time, data }` whose `seq` is
 *   its 0-based line index; line 1 is `session/meta` with a format `version`
 *   no newer than `FORMAT_VERSION`;
 * - bytes after the last newline are a torn tail (a write the crash cut
 *   short); they are left out and reported in `torn` (the caller cuts them);
 * - a complete (newline-terminated) line that is not valid UTF-8, does not
 *   parse or is not a valid event rejects with `CORRUPT_SESSION` naming the
 *   file and the 1-based line number, the last line included: a crash cannot
 *   produce it, so it is a hand edit or damage, and dropping it would lose
 *   data silently;
 * - a type the catalog does not know rejects with `UNKNOWN_TYPE` unless
 *   the line is marked `"ignorable":true` (the mark stays on the event, as
 *   the session set it).
 *
 * Rejects with `SESSION_NOT_FOUND` when the file is missing or holds no
 * complete line (a writer that died before its first flush), `NOT_A_FILE`
 * when a directory is in its place, and the typed error of any other read
 * failure. Once `signal` aborts, it stops after the read under way and
 * rejects with the signal's reason.
 */
export async function readSessionFile(
  path: string,
  id: string,
  types: EventTypeCatalog,
  log: LoadedLog,
  signal?: AbortSignal,
): Promise<SessionFileContents> {
  signal?.throwIfAborted()
  let lineNumber = 0
  let offset = 0 // bytes consumed, up to the end of the last complete line

  const accept = (buffer: Buffer, start: number, end: number, checkUtf8: boolean) => {
    lineNumber++
    // Decoding would turn invalid bytes into U+FFFD silently; a line that is not UTF-8 is damage.
    if (checkUtf8 && !isUtf8(buffer.subarray(start, end))) throw corrupt(path, lineNumber, 'is not valid UTF-8')
    // Most lines are chunk events, packed straight from the bytes (line 1 is always session/meta).
    if (lineNumber > 1 && log.pushChunkJson(buffer, start, end)) {
      offset += end - start + 1
      return
    }
    let value: unknown
    try {
      value = JSON.parse(buffer.toString('utf8', start, end))
    } catch {
      throw corrupt(path, lineNumber, 'is not valid JSON')
    }
    offset += end - start + 1
    log.push(toEvent(value, log.length, lineNumber, path, types))
  }

  // One buffer, reused for every read: a line straddling two reads is moved to its front. (A read
  // stream would hand over a new buffer per read, and dead buffers live outside the JS heap until a
  // collection notices them: tens of megabytes of resident memory while a large session loads.)
  let handle: FileHandle
  try {
    handle = await open(path, 'r')
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') throw notFound(id, path)
    throw readError(error, id, path)
  }
  let buffer = Buffer.allocUnsafeSlow(READ_CHUNK)
  let kept = 0 // bytes at the front of `buffer` that belong to a line not finished yet
  try {
    let position = 0
    for (;;) {
      if (kept === buffer.length) {
        // A line longer than the buffer: make room for the rest of it.
        const larger = Buffer.allocUnsafeSlow(buffer.length * 2)
        buffer.copy(larger, 0, 0, kept)
        buffer = larger
      }
      const { bytesRead } = await handle.read(buffer, kept, buffer.length - kept, position)
      signal?.throwIfAborted()
      if (bytesRead === 0) break
      position += bytesRead
      const end = kept + bytesRead
      // Newlines never occur inside a UTF-8 sequence, so the complete lines are valid UTF-8 as a
      // whole exactly when each of them is: one check per read, and per line only after a miss.
      const complete = buffer.lastIndexOf(NEWLINE, end - 1)
      const checkUtf8 = complete !== -1 && !isUtf8(buffer.subarray(0, complete))
      let start = 0
      let newline: number
      while ((newline = buffer.indexOf(NEWLINE, start)) !== -1 && newline < end) {
        accept(buffer, start, newline, checkUtf8)
        start = newline + 1
      }
      kept = end - start
      if (kept > 0 && start > 0) buffer.copyWithin(0, start, end)
    }
  } catch (error) {
    if (error instanceof JsonlPersistenceError || (signal?.aborted && error === signal.reason)) throw error
    throw readError(error, id, path)
  } finally {
    await handle.close().catch(() => {})
  }
  // Bytes after the last newline: a write the crash cut short (or a zero-filled block after a power cut).
  const torn: SessionFileContents['torn'] = kept > 0 ? { line: lineNumber + 1, bytes: kept } : undefined
  if (log.length === 0) {
    throw new JsonlPersistenceError(
      'SESSION_NOT_FOUND',
      `Session "${id}" has no complete event in ${path} (its writer stopped before the first flush); delete the file or create the session fresh.`,
      { file: path },
    )
  }
  return torn ? { validBytes: offset, torn } : { validBytes: offset }
}

function readError(error: unknown, id: string, path: string): JsonlPersistenceError {
  return fsError(error, { operation: 'read', file: path, doing: `Reading session "${id}"`, consequence: 'The file was not changed.' })
}

export function notFound(id: string, path: string): JsonlPersistenceError {
  return new JsonlPersistenceError('SESSION_NOT_FOUND', `No persisted session "${id}" (expected ${path}).`, { file: path })
}

/** `CORRUPT_SESSION` for line `line` (1-based) of `path`; `problem` continues "the line …". */
export function corrupt(path: string, line: number, problem: string): JsonlPersistenceError {
  return new JsonlPersistenceError(
    'CORRUPT_SESSION',
    `Corrupt session file ${path}, line ${line}: the line ${problem}. Lines after it cannot be trusted; restore the file from a backup, or truncate it before this line to keep the earlier history.`,
    { file: path, line },
  )
}

type Loose = { type?: unknown; seq?: unknown; time?: unknown; data?: unknown; ignorable?: unknown }

function toEvent(value: unknown, seq: number, line: number, path: string, types: EventTypeCatalog): object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw corrupt(path, line, 'is not a JSON object')
  const event = value as Loose
  if (typeof event.type !== 'string') throw corrupt(path, line, 'has no string "type"')
  if (event.seq !== seq) throw corrupt(path, line, `has seq ${JSON.stringify(event.seq)} where ${seq} was expected`)
  if (typeof event.time !== 'number' || !Number.isFinite(event.time)) throw corrupt(path, line, 'has no numeric "time"')
  if (typeof event.data !== 'object' || event.data === null || Array.isArray(event.data)) {
    throw corrupt(path, line, 'has no object "data"')
  }
  // The writer writes these fields only; anything else is a hand edit or another program's line.
  for (const key in event) {
    if (key !== 'type' && key !== 'seq' && key !== 'time' && key !== 'data' && key !== 'ignorable') {
      throw corrupt(path, line, `has a field ${JSON.stringify(key)} outside type, seq, time, data and ignorable`)
    }
  }
  if (seq === 0) checkMeta(event, path)
  else if (event.type === 'session/meta' && event.data !== null) {
    // A later meta is allowed by the log, but it must not claim a newer format either.
    checkVersion((event.data as { version?: unknown }).version, path, line)
  }
  const canonical = types.canonical(event.type)
  if (canonical !== undefined) {
    event.type = canonical
  } else if (event.ignorable !== true) {
    throw new JsonlPersistenceError(
      'UNKNOWN_TYPE',
      `Session file ${path}, line ${line}: event type "${event.type}" is not known to this process and was not marked ignorable by its writer. Load the plugin that defines "${event.type}" before loading this session.`,
      { file: path, line },
    )
  }
  return event
}

function checkMeta(event: Loose, path: string): void {
  if (event.type !== 'session/meta') throw corrupt(path, 1, `is a "${String(event.type)}" event where "session/meta" was expected`)
  checkVersion((event.data as { version?: unknown }).version, path, 1)
}

function checkVersion(version: unknown, path: string, line: number): void {
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw corrupt(path, line, 'has a session/meta without an integer format "version"')
  }
  if (version > FORMAT_VERSION) {
    throw new JsonlPersistenceError(
      'UNSUPPORTED_VERSION',
      `Session file ${path} uses format version ${version}; this @deepseek-ai/dsh-session-jsonl reads versions up to ${FORMAT_VERSION}. Upgrade the package to load it; the file was left untouched.`,
      { file: path, line },
    )
  }
}
