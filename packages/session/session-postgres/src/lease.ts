import { PostgresPersistenceError } from './errors'
import type { Sql, Tables } from './database'

/** A lease this process holds: the session and the epoch its writes must carry. */
export interface HeldLease {
  readonly id: string
  readonly epoch: number
}

/** A lease statement runs on the pool or inside a transaction. */
type Runner = Pick<Sql, 'unsafe'>

/**
 * Takes session `id`'s lease for `holder`, in one statement: a new lease
 * starts at epoch 1; an expired (or released) lease of another holder is
 * taken over with its epoch raised by one, which fences every write of the
 * former holder (R-PG-2); the holder's own lease is renewed at the same
 * epoch. Expiry is judged by the server's clock, so hosts need no agreement
 * on time.
 *
 * Rejects with `SESSION_LOCKED` (naming the holder and when its lease ends)
 * while another holder's lease is live.
 */
export async function acquireLease(sql: Runner, tables: Tables, id: string, holder: string, ttlMs: number): Promise<HeldLease> {
  const rows = await sql.unsafe<{ epoch: string }[]>(
    `INSERT INTO ${tables.leases} AS l (session_id, holder, epoch, expires_at)
       VALUES ($1, $2, 1, clock_timestamp() + $3 * interval '1 millisecond')
     ON CONFLICT (session_id) DO UPDATE SET
       epoch = CASE WHEN l.holder = excluded.holder THEN l.epoch ELSE l.epoch + 1 END,
       holder = excluded.holder,
       expires_at = excluded.expires_at
     WHERE l.holder = excluded.holder OR l.expires_at <= clock_timestamp()
     RETURNING epoch`,
    [id, holder, ttlMs],
  )
  if (rows.length === 1) return { id, epoch: Number(rows[0]!.epoch) }
  const current = await sql.unsafe<{ holder: string; remaining: number }[]>(
    `SELECT holder, GREATEST(0, EXTRACT(EPOCH FROM expires_at - clock_timestamp()) * 1000)::float8 AS remaining FROM ${tables.leases} WHERE session_id = $1`,
    [id],
  )
  const row = current[0]
  throw locked(id, row?.holder, row?.remaining)
}

/**
 * Checks, inside a write's transaction, that `lease` is still this holder's
 * at the same epoch, and renews it. The row stays locked until the
 * transaction ends, so a takeover waits for the write and the write can
 * never commit after a takeover. Rejects with `LEASE_LOST` otherwise.
 */
export async function checkLease(tx: Runner, tables: Tables, lease: HeldLease, holder: string, ttlMs: number): Promise<void> {
  const rows = await tx.unsafe(
    `UPDATE ${tables.leases} SET expires_at = clock_timestamp() + $4 * interval '1 millisecond'
     WHERE session_id = $1 AND holder = $2 AND epoch = $3 RETURNING 1`,
    [lease.id, holder, lease.epoch, ttlMs],
  )
  if (rows.length !== 1) throw lost(lease.id, lease.epoch)
}

/**
 * Renews every lease in `leases` at once (the heartbeat) and returns the ids
 * whose lease is no longer this holder's at that epoch: another process took
 * them over.
 */
export async function renewLeases(sql: Runner, tables: Tables, leases: readonly HeldLease[], holder: string, ttlMs: number): Promise<string[]> {
  if (leases.length === 0) return []
  const rows = await sql.unsafe<{ session_id: string }[]>(
    `UPDATE ${tables.leases} AS l SET expires_at = clock_timestamp() + $4 * interval '1 millisecond'
     FROM unnest($1::text[], $2::bigint[]) AS h(id, epoch)
     WHERE l.session_id = h.id AND l.epoch = h.epoch AND l.holder = $3
     RETURNING l.session_id`,
    [leases.map((lease) => lease.id), leases.map((lease) => lease.epoch), holder, ttlMs],
  )
  const renewed = new Set(rows.map((row) => row.session_id))
  return leases.filter((lease) => !renewed.has(lease.id)).map((lease) => lease.id)
}

/**
 * Gives the lease up: it expires now, keeping its holder and epoch, so the
 * next holder may take it at once (and raises the epoch), while this holder
 * taking it again keeps the epoch. Harmless when the lease is gone.
 */
export async function releaseLease(sql: Runner, tables: Tables, lease: HeldLease, holder: string): Promise<void> {
  await sql.unsafe(`UPDATE ${tables.leases} SET expires_at = clock_timestamp() WHERE session_id = $1 AND holder = $2 AND epoch = $3`, [
    lease.id,
    holder,
    lease.epoch,
  ])
}

export function locked(id: string, holder: string | undefined, remainingMs: number | undefined): PostgresPersistenceError {
  const who = holder === undefined ? 'another process' : `"${holder}"`
  const when = remainingMs === undefined ? '' : ` Its lease ends in ${Math.ceil(remainingMs / 100) / 10} s unless renewed; a process that died loses it then.`
  return new PostgresPersistenceError(
    'SESSION_LOCKED',
    `Session "${id}" is being written by ${who}, which holds its lease.${when} Only one process may write a session: resume it once that process has let go, or watch it instead.`,
    { id },
  )
}

export function lost(id: string, epoch: number): PostgresPersistenceError {
  return new PostgresPersistenceError(
    'LEASE_LOST',
    `Session "${id}" was taken over by another process (this process held its lease at epoch ${epoch}, which expired: the process was paused or cut off from the database for longer than the lease TTL). Nothing this process appended after its last flush is stored; the other process continues the session.`,
    { id },
  )
}
