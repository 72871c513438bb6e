import type { Sql, Tables } from './database'
import { PostgresPersistenceError } from './errors'
import { lost, type HeldLease } from './lease'

/** The server's clock in ms since the epoch, as SQL. */
const NOW_MS = `(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint`

/**
 * Commits events `firstSeq…` (their stored text, `lines`) of a session whose
 * lease this holder has, as one transaction whose four statements (the lease
 * renewal at its epoch, the rows, the `sessions` row, the notification) are
 * pipelined in one round trip between `BEGIN` and `COMMIT`: every statement
 * after the renewal is conditioned on the lease row being this holder's at
 * `lease.epoch` and on the session ending at `firstSeq`, so none has to wait
 * for the renewal's answer. A fenced or mismatched write changes nothing and
 * is refused from the statements' results (`LEASE_LOST`, `INVALID_APPEND`); a
 * failing statement rolls the transaction back. The renewal locks the lease
 * row until the end, so a takeover waits for the write.
 *
 * Under load each round trip costs a scheduling delay or more, which is why
 * the statements are pipelined; the first write of a new session (which takes
 * the lease and creates the `sessions` row) uses `appendRows`.
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
  const mine = `EXISTS (SELECT 1 FROM ${tables.leases} WHERE session_id = $1 AND holder = $2 AND epoch = $3)`
  const continues = `EXISTS (SELECT 1 FROM ${tables.sessions} WHERE id = $1 AND event_count = $4)`
  const settled = await sql.begin((tx) =>
    Promise.all([
      tx.unsafe(
        `UPDATE ${tables.leases} SET expires_at = clock_timestamp() + $4 * interval '1 millisecond'
         WHERE session_id = $1 AND holder = $2 AND epoch = $3 RETURNING 1`,
        [id, holder, lease.epoch, ttlMs],
      ),
      // A stored line never holds a newline (JSON escapes it): the rows travel as one text parameter.
      tx.unsafe(
        `INSERT INTO ${tables.events} (session_id, seq, line)
         SELECT $1, $4 + o::integer - 1, l FROM unnest(string_to_array($5, E'\\n')) WITH ORDINALITY AS u(l, o)
         WHERE ${mine} AND ${continues}`,
        [id, holder, lease.epoch, firstSeq, lines.join('\n')],
      ),
      tx.unsafe(
        `UPDATE ${tables.sessions} SET updated_at = ${NOW_MS}, event_count = $5
         WHERE id = $1 AND event_count = $4 AND ${mine} RETURNING 1`,
        [id, holder, lease.epoch, firstSeq, end],
      ),
      tx.unsafe(`SELECT pg_notify($4, $5) WHERE ${mine}`, [id, holder, lease.epoch, tables.channel, `${id}\t${end}`]),
    ]),
  )
  // Nothing was changed when the lease is not ours or the session does not end at firstSeq: every
  // statement after the renewal is conditioned on both.
  if (settled[0].length !== 1) throw lost(id, lease.epoch)
  if (settled[2].length !== 1) {
    throw new PostgresPersistenceError(
      'INVALID_APPEND',
      `Session "${id}" does not end at seq ${firstSeq} in the database (it is missing, or was written meanwhile); nothing of this write was stored. Load the session again.`,
      { id, seq: firstSeq },
    )
  }
}

