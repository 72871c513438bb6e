import type { LoadedLog } from '@deepseek-ai/dsh-session'
import { PostgresPersistenceError } from './errors'
import type { EventTypeCatalog } from './event-types'
import type { Sql, Tables } from './database'
import { FORMAT_VERSION } from './line-format'

/** Rows fetched per round trip while a session streams in. */
const CURSOR_ROWS = 10_000

/**
 * Streams the stored events of session `id` into `log` in seq order, a
 * cursor batch at a time (the load never holds the whole result), checking
 * each as dsh-session-jsonl checks a line (R-PER-2, R-PER-4): the text is one
 * JSON object `{ type, seq, time, data }` whose `seq` is its index (a gap is
 * corrupt), the first is `session/meta` with a format `version` this package
 * reads, and an unknown type loads only when marked ignorable. Chunk events
 * are packed straight from their bytes (`pushChunkJson`).
 *
 * Rejects with `CORRUPT_SESSION` (naming the seq, never the content; a
 * stored record is never dropped), `UNKNOWN_TYPE`, `UNSUPPORTED_VERSION`, or
 * the signal's reason once it aborts (after the batch under way). Returns
 * the number of events read.
 */
export async function readEvents(sql: Sql, tables: Tables, id: string, types: EventTypeCatalog, log: LoadedLog, signal?: AbortSignal): Promise<number> {
  const cursor = sql
    .unsafe<{ seq: number; line: string }[]>(`SELECT seq, line FROM ${tables.events} WHERE session_id = $1 ORDER BY seq`, [id])
    .cursor(CURSOR_ROWS)
  for await (const rows of cursor) {
    signal?.throwIfAborted()
    // One buffer per batch: the rows' text joined by newlines, each chunk event packed from its bytes.
    let text = ''
    for (const row of rows) text += row.line + '\n'
    const bytes = Buffer.from(text, 'utf8')
    let start = 0
    for (const row of rows) {
      const seq = log.length
      if (row.seq !== seq) throw corrupt(id, seq, `is missing (the next stored event is seq ${row.seq})`)
      const end = bytes.indexOf(0x0a, start)
      if (seq === 0 || !log.pushChunkJson(bytes, start, end)) {
        let value: unknown
        try {
          value = JSON.parse(row.line)
        } catch {
          throw corrupt(id, seq, 'is not valid JSON')
        }
        log.push(toEvent(value, seq, id, types))
      }
      start = end + 1
    }
  }
  signal?.throwIfAborted()
  return log.length
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
