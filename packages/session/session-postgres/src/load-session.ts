import { loadRepaired, type LoadedSession } from '@deepseek-ai/dsh-session'
import { appendRows } from './append-rows'
import type { Sql, Tables } from './database'
import { PostgresPersistenceError } from './errors'
import type { EventTypeCatalog } from './event-types'
import { acquireLease, checkLease, type HeldLease } from './lease'
import { readEvents } from './read-events'
import { serializeEvent } from './line-format'

export interface SessionLoad {
  sql: Sql
  tables: Tables
  id: string
  holder: string
  leaseTtlMs: number
  types: EventTypeCatalog
  signal?: AbortSignal
}

/**
 * Takes session `id`'s lease (in one transaction with the check that the
 * session exists), so nobody writes while it is read and repaired and the
 * caller can go on writing it. Rejects with `SESSION_NOT_FOUND` (no lease is
 * taken then) or `SESSION_LOCKED`. Returns the lease and the stored count.
 */
export async function leaseForLoad(load: SessionLoad): Promise<{ lease: HeldLease; count: number }> {
  const { sql, tables, id } = load
  return sql.begin(async (tx) => {
    const rows = await tx.unsafe<{ event_count: number }[]>(`SELECT event_count FROM ${tables.sessions} WHERE id = $1`, [id])
    if (rows.length === 0) throw notFound(id)
    const lease = await acquireLease(tx, tables, id, load.holder, load.leaseTtlMs)
    return { lease, count: rows[0]!.event_count }
  })
}

/**
 * Reads and repairs a session whose lease the caller holds (R-PER-3): the
 * stored events stream into a `LoadedLog` (`readEvents`), dsh-session's
 * `loadRepaired` plans the repair exactly as for JSONL, and the repairs are
 * appended in one transaction that checks the lease. A store has no torn
 * tail to cut (a transaction commits whole), so `warnings` stays empty. An
 * aborted signal stops the read and writes nothing.
 */
export async function loadSession(load: SessionLoad, lease: HeldLease, count: number): Promise<LoadedSession> {
  const { sql, tables, id, signal } = load
  return loadRepaired(
    id,
    {
      read: async (log) => {
        const read = await readEvents(sql, tables, id, load.types, log, signal)
        if (read !== count) {
          throw new PostgresPersistenceError(
            'CORRUPT_SESSION',
            `Corrupt stored session "${id}": its row counts ${count} events but ${read} are stored. Restore the database from a backup.`,
            { id, seq: read },
          )
        }
        return []
      },
      appendRepairs: async (events) => {
        signal?.throwIfAborted()
        await sql.begin(async (tx) => {
          await checkLease(tx, tables, lease, load.holder, load.leaseTtlMs)
          await appendRows(tx, tables, id, events[0]!.seq, events.map(serializeEvent))
        })
      },
    },
    signal === undefined ? {} : { signal },
  )
}

export function notFound(id: string): PostgresPersistenceError {
  return new PostgresPersistenceError('SESSION_NOT_FOUND', `No stored session "${id}" in the database.`, { id })
}
