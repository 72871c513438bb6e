import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import type { Sql, Tables } from './database'
import { PostgresPersistenceError, databaseError } from './errors'

/** Options of `watch`. */
export interface WatchOptions {
  /** The first seq to deliver (default 0: the whole log, then everything appended). */
  fromSeq?: number
  /** Ends the watch: the iteration finishes (it does not throw) once the signal aborts. */
  signal?: AbortSignal
}

/** Rows read per round trip while a watcher catches up. */
const PAGE = 5_000

/**
 * Follows session `id` from a process that does not hold its lease (R-PG-3):
 * yields every committed event from `fromSeq` on, in seq order, each once,
 * then waits for more. Each write's transaction announces the session's new
 * end with `NOTIFY` (delivered at commit); the watcher `LISTEN`s on the
 * backend's channel and reads by seq after each announcement for its
 * session, so it never sees an uncommitted or rolled-back event and never
 * skips one: it reads once after `LISTEN` is in place (and again after the
 * client reconnects), so nothing committed before or between announcements
 * is missed.
 *
 * The events are the stored ones, parsed (`JSON.parse` of the stored text).
 * It starts once `ready` (the migration) has resolved. A failed read rejects
 * the iteration with `DATABASE_FAILED`.
 */
export async function* watchSession(
  sql: Sql,
  tables: Tables,
  id: string,
  options: WatchOptions = {},
  ready: Promise<unknown> = Promise.resolve(),
): AsyncGenerator<AnySessionEvent, void, undefined> {
  const { signal } = options
  let next = options.fromSeq ?? 0
  // A seq the rows can never equal (-1, 1.5, "2") would make the watch read forever and yield nothing.
  if (!Number.isSafeInteger(next) || next < 0) {
    throw new PostgresPersistenceError(
      'INVALID_ARGUMENT',
      `watch() of session "${id}": fromSeq ${JSON.stringify(next)} is not a seq; give a whole number from 0 (the first event to deliver).`,
      { id },
    )
  }
  // The tables exist once the migration is done (it rejects, typed, when it failed).
  await ready
  let due = true
  let wake: (() => void) | undefined
  const poke = () => {
    due = true
    wake?.()
  }
  const prefix = `${id}\t`
  const listening = await sql
    .listen(
      tables.channel,
      (payload) => {
        if (payload.startsWith(prefix) && Number(payload.slice(prefix.length)) > next) poke()
      },
      poke,
    )
    .catch((error: unknown) => {
      if (signal?.aborted) return undefined
      throw databaseError(error, `Watching session "${id}"`, id)
    })
  if (listening === undefined) return
  signal?.addEventListener('abort', poke)
  try {
    while (!signal?.aborted) {
      if (!due) await new Promise<void>((resolve) => (wake = resolve))
      wake = undefined
      if (signal?.aborted) break
      due = false
      let rows: { seq: number; line: string }[]
      try {
        rows = await sql.unsafe<{ seq: number; line: string }[]>(
          `SELECT seq, line FROM ${tables.events} WHERE session_id = $1 AND seq >= $2 ORDER BY seq LIMIT ${PAGE}`,
          [id, next],
        )
      } catch (error) {
        // Ended meanwhile (the plugin closed the pool under the read): the watch just ends.
        if (signal?.aborted) return
        throw databaseError(error, `Reading session "${id}" for a watcher`, id)
      }
      for (const row of rows) {
        if (row.seq !== next) break
        next++
        yield JSON.parse(row.line) as AnySessionEvent
        if (signal?.aborted) return
      }
      if (rows.length === PAGE) due = true
    }
  } finally {
    signal?.removeEventListener('abort', poke)
    await listening.unlisten().catch(() => {})
  }
}
