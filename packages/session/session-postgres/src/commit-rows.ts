import type { Sql, Tables } from './database'
import { PostgresPersistenceError } from './errors'
import { lost, type HeldLease } from './lease'

/** The server's clock in ms since the epoch, as SQL. */
const NOW_MS = `(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint`

/**
 * Commits events `firstSeq…` (their stored text, `lines`) of a session whose
 * lease this holder has, as ONE statement, which PostgreSQL runs as one
 * transaction: data-modifying CTEs renew the lease where its holder and
 * epoch are this process's (R-PG-2), advance the `sessions` row where the
 * session ends at `firstSeq` and the lease was renewed, insert the rows and
 * send the notification where the `sessions` row advanced. So the epoch
 * check is in the same transaction as the rows, a fenced or mismatched write
 * changes nothing and is refused from the statement's answer (`LEASE_LOST`,
 * `INVALID_APPEND`), and a failing statement stores nothing. The renewal
 * locks the lease row until the commit, so a takeover waits for the write.
 *
 * One statement is one round trip and no open transaction between messages:
 * `BEGIN`, the statements and `COMMIT` cost three round trips, each a
 * scheduling delay or more on a loaded machine, and a process stopped
 * between them kept the lease row locked until the server's idle timeout.
 * The rows travel as one text parameter split on the server (a stored line
 * never holds a newline: JSON escapes it), which costs the client a third of
 * the CPU an array parameter does; `string_to_table` (PostgreSQL 14) yields
 * the lines as rows without building the array `string_to_array` made,
 * about a quarter of the server's CPU per row less. The first write of a new
 * session (which takes the lease and creates the `sessions` row) uses
 * `appendRows`.
 */
export async function commitRows(
  sql: Sql,
  tables: Tables,
  lease: HeldLease,
  holder: string,
  ttlMs: number,
  firstSeq: number,
  lines: readonly string[],
): Promise<void> {
  const id = lease.id
  const end = firstSeq + lines.length
  const [answer] = await sql.unsafe<{ renewed: boolean; advanced: boolean }[]>(
    `WITH renewed AS (
       UPDATE ${tables.leases} SET expires_at = clock_timestamp() + $4 * interval '1 millisecond'
       WHERE session_id = $1 AND holder = $2 AND epoch = $3 RETURNING 1
     ), advanced AS (
       UPDATE ${tables.sessions} SET updated_at = ${NOW_MS}, event_count = $6
       WHERE id = $1 AND event_count = $5 AND EXISTS (SELECT 1 FROM renewed) RETURNING 1
     ), inserted AS (
       INSERT INTO ${tables.events} (session_id, seq, line)
       SELECT $1, $5 + o::integer - 1, l FROM string_to_table($7, E'\\n') WITH ORDINALITY AS u(l, o)
       WHERE EXISTS (SELECT 1 FROM advanced)
     ), notified AS (
       SELECT pg_notify($8, $9) WHERE EXISTS (SELECT 1 FROM advanced)
     )
     SELECT EXISTS (SELECT 1 FROM renewed) AS renewed, EXISTS (SELECT 1 FROM advanced) AS advanced, (SELECT count(*) FROM notified) AS notified`,
    [id, holder, lease.epoch, ttlMs, firstSeq, end, lines.join('\n'), tables.channel, `${id}\t${end}`],
  )
  if (!answer?.renewed) throw lost(id, lease.epoch)
  if (!answer.advanced) {
    throw new PostgresPersistenceError(
      'INVALID_APPEND',
      `Session "${id}" does not end at seq ${firstSeq} in the database (it is missing, or was written meanwhile); nothing of this write was stored. Load the session again.`,
      { id, seq: firstSeq },
    )
  }
}
