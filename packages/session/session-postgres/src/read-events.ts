import type { LoadedLog } from '@deepseek-ai/dsh-session'
import { PostgresPersistenceError } from './errors'
import type { EventTypeCatalog } from './event-types'
import type { Sql, Tables } from './database'
import { FORMAT_VERSION } from './line-format'

/**
 * Streams the stored events of session `id` into `log` in seq order, as one
 * query whose rows are handled as they arrive (postgres.js `forEach`: no
 * cursor round trips, and the load never holds the whole result), checking
 * each as dsh-session-jsonl checks a line (R-PER-2, R-PER-4): the text is one
 * JSON object `{ type, seq, time, data }` whose `seq` is its index (a gap is
 * corrupt), the first is `session/meta` with a format `version` this package
 * reads, and an unknown type loads only when marked ignorable.
 *
 * The rows come raw (`raw()`: each value the bytes of the server's message,
 * never decoded into a string), so a chunk event is packed straight from the
 * bytes the server sent (`pushChunkJson`) and only other events are decoded
 * and parsed. A row handler cannot stop the query, so after a problem the
 * remaining rows are ignored and the load rejects once the query ends. The
 * query is never cancelled: a cancel request that arrived late would cancel
 * whatever statement the pooled connection runs next.
 *
 * Rejects with `CORRUPT_SESSION` (naming the seq, never the content; a
 * stored record is never dropped), `UNKNOWN_TYPE`, `UNSUPPORTED_VERSION`, or
 * at once with the signal's reason when it aborts (the query then runs to
 * its end in the background, its rows ignored). Returns the number of events
 * read.
 */
export async function readEvents(sql: Sql, tables: Tables, id: string, types: EventTypeCatalog, log: LoadedLog, signal?: AbortSignal): Promise<number> {
  signal?.throwIfAborted()
  let problem: { error: unknown } | undefined
  const bytes = new WholeBuffer()
  const read = sql
    .unsafe(`SELECT seq, line FROM ${tables.events} WHERE session_id = $1 ORDER BY seq`, [id])
    .raw()
    .forEach((row) => {
      if (problem !== undefined) return
      try {
        readRow(row as unknown as Buffer[], bytes, id, types, log)
      } catch (error) {
        problem = { error }
      }
    })
  if (signal === undefined) {
    await read
  } else {
    let onAbort!: () => void
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        problem ??= { error: signal.reason }
        reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
    })
    read.catch(() => {})
    try {
      await Promise.race([read, aborted])
    } finally {
      signal.removeEventListener('abort', onAbort)
    }
  }
  if (problem !== undefined) throw problem.error
  return log.length
}

/**
 * The whole memory a row's bytes are a view of. The rows of one socket read
 * are views of the same memory, and `pushChunkJson` prepares its reader once
 * per source it is given: handing it the same source for all of them (with
 * the row's offsets) keeps it from doing that for every row.
 */
class WholeBuffer {
  private whole: Buffer | undefined

  of(view: Buffer): Buffer {
    if (this.whole === undefined || this.whole.buffer !== view.buffer) this.whole = Buffer.from(view.buffer)
    return this.whole
  }
}

/** Checks and stores one row `[seq, line]` (each the raw text bytes of its column). */
function readRow(row: Buffer[], bytes: WholeBuffer, id: string, types: EventTypeCatalog, log: LoadedLog): void {
  const seq = log.length
  const stored = digits(row[0]!)
  if (stored !== seq) throw corrupt(id, seq, `is missing (the next stored event is seq ${stored})`)
  const line = row[1]!
  if (seq > 0 && log.pushChunkJson(bytes.of(line), line.byteOffset, line.byteOffset + line.length)) return
  let value: unknown
  try {
    value = JSON.parse(line.toString('utf8'))
  } catch {
    throw corrupt(id, seq, 'is not valid JSON')
  }
  log.push(toEvent(value, seq, id, types))
}

/** The integer an `integer` column's text holds. */
function digits(bytes: Buffer): number {
  let value = 0
  for (let i = 0; i < bytes.length; i++) {
    const digit = bytes[i]! - 0x30
    if (digit < 0 || digit > 9) return Number(bytes.toString('latin1'))
    value = value * 10 + digit
  }
  return value
}

function corrupt(id: string, seq: number, problem: string): PostgresPersistenceError {
  return new PostgresPersistenceError(
    'CORRUPT_SESSION',
    `Corrupt stored session "${id}": event ${seq} ${problem}. Events after it cannot be trusted; restore the database from a backup, or delete the rows from this seq on to keep the earlier history.`,
    { id, seq },
  )
}

type Loose = { type?: unknown; seq?: unknown; time?: unknown; data?: unknown; ignorable?: unknown }

function toEvent(value: unknown, seq: number, id: string, types: EventTypeCatalog): object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw corrupt(id, seq, 'is not a JSON object')
  const event = value as Loose
  if (typeof event.type !== 'string') throw corrupt(id, seq, 'has no string "type"')
  if (event.seq !== seq) throw corrupt(id, seq, `holds seq ${JSON.stringify(event.seq)}`)
  if (typeof event.time !== 'number' || !Number.isFinite(event.time)) throw corrupt(id, seq, 'has no numeric "time"')
  if (typeof event.data !== 'object' || event.data === null || Array.isArray(event.data)) throw corrupt(id, seq, 'has no object "data"')
  if (seq === 0 && event.type !== 'session/meta') throw corrupt(id, seq, `is a "${event.type}" event where "session/meta" was expected`)
  if (event.type === 'session/meta') checkVersion((event.data as { version?: unknown }).version, id, seq)
  const canonical = types.canonical(event.type)
  if (canonical !== undefined) {
    event.type = canonical
  } else if (event.ignorable !== true) {
    throw new PostgresPersistenceError(
      'UNKNOWN_TYPE',
      `Stored session "${id}", event ${seq}: event type "${event.type}" is not known to this process and was not marked ignorable by its writer. Load the plugin that defines "${event.type}" before loading this session.`,
      { id, seq },
    )
  }
  return event
}

function checkVersion(version: unknown, id: string, seq: number): void {
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) throw corrupt(id, seq, 'is a session/meta without an integer format "version"')
  if (version > FORMAT_VERSION) {
    throw new PostgresPersistenceError(
      'UNSUPPORTED_VERSION',
      `Stored session "${id}" uses format version ${version}; this @deepseek-ai/dsh-session-postgres reads versions up to ${FORMAT_VERSION}. Upgrade the package to load it; nothing was changed.`,
      { id, seq },
    )
  }
}
