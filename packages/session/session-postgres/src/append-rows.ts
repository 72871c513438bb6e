import { PostgresPersistenceError } from './errors'
import type { Sql, Tables } from './database'

type Runner = Pick<Sql, 'unsafe'>

/** The facts of a new session's `sessions` row, from its `session/meta`. */
export interface SessionFacts {
  createdAt: number
  cwd?: string
  parentSession?: string
}

/** The server's clock in ms since the epoch, as SQL. */
const NOW_MS = `(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint`

/**
 * Inserts events `firstSeq…` of session `id` (their stored text, `lines`)
 * inside a write's transaction, after the caller checked its lease: creates
 * the `sessions` row first when `facts` are given (a new session; rejects
 * with `SESSION_EXISTS` when the id is taken), keeps `updated_at` and
 * `event_count` current, and announces the new end on the channel
 * (`pg_notify` is delivered at commit, so a watcher only ever hears of
 * committed events). The key `(session_id, seq)` refuses an event stored
 * twice.
 */
export async function appendRows(tx: Runner, tables: Tables, id: string, firstSeq: number, lines: readonly string[], facts?: SessionFacts): Promise<void> {
  const end = firstSeq + lines.length
  if (facts) {
    const created = await tx.unsafe(
      `INSERT INTO ${tables.sessions} (id, created_at, updated_at, cwd, parent_session, event_count)
       VALUES ($1, $2, ${NOW_MS}, $3, $4, 0) ON CONFLICT (id) DO NOTHING RETURNING 1`,
      [id, facts.createdAt, facts.cwd ?? null, facts.parentSession ?? null],
    )
    if (created.length !== 1) {
      throw new PostgresPersistenceError(
        'SESSION_EXISTS',
        `A stored session "${id}" already exists; writing a new log under its id would corrupt it. Resume it (load it first), delete it, or pick another id.`,
        { id },
      )
    }
  }
  // Pipelined: one round trip for the three statements. The rows travel as one text parameter, split
  // on the server: a stored line never holds a newline (JSON escapes it), and a single string costs
  // the client a third of the CPU an array parameter does (no per-element quoting).
  const [, updated] = await Promise.all([
    tx.unsafe(
      `INSERT INTO ${tables.events} (session_id, seq, line)
       SELECT $1, $2 + o::integer - 1, l FROM string_to_table($3, E'\\n') WITH ORDINALITY AS u(l, o)`,
      [id, firstSeq, lines.join('\n')],
    ),
    tx.unsafe(`UPDATE ${tables.sessions} SET updated_at = ${NOW_MS}, event_count = $2 WHERE id = $1 AND event_count = $3 RETURNING 1`, [
      id,
      end,
      firstSeq,
    ]),
    tx.unsafe(`SELECT pg_notify($1, $2)`, [tables.channel, `${id}\t${end}`]),
  ])
  if (updated.length !== 1) {
    throw new PostgresPersistenceError(
      'INVALID_APPEND',
      `Session "${id}" does not end at seq ${firstSeq} in the database (it is missing, or was written meanwhile); nothing of this write was stored. Load the session again.`,
      { id, seq: firstSeq },
    )
  }
}
