import type { WriteBehindStorage } from '@deepseek-ai/dsh-session'
import { appendRows, type SessionFacts } from './append-rows'
import type { Sql, Tables } from './database'
import { commitRows } from './commit-rows'
import { acquireLease, releaseLease, type HeldLease } from './lease'
import type { RowBatch } from './row-queue'

export interface SessionStorageOptions {
  sql: Sql
  tables: Tables
  id: string
  holder: string
  leaseTtlMs: number
  /** The lease this process already holds (a loaded session), or none: the first write takes it (a new session). */
  lease: HeldLease | undefined
  /** For a new session: how to read its facts from the first batch (its `session/meta`). */
  facts?: (batch: RowBatch) => SessionFacts
  /** Resolves once the schema is migrated. */
  ready: Promise<unknown>
  /** Told when the first write took the lease, and when `close` gives it up: the heartbeat renews what it is told of. */
  onLease(lease: HeldLease | undefined): void
  /** Resolves once a renewal under way has ended (so the release is not undone by it). */
  settled(): Promise<void>
}

/**
 * The storage under one session writer's `WriteBehind`: each `write` is one
 * committed transaction (R-PG-1) that checks the lease at its epoch and
 * renews it (R-PG-2), inserts the batch's rows and announces them, sent in
 * one round trip (`commitRows`); `sync`
 * has nothing left to do (a committed transaction is durable with the
 * server's default `synchronous_commit`). A flush therefore commits what it
 * covers in one transaction, and nothing of a failed write is stored.
 *
 * The first write of a new session takes the lease in the same transaction
 * and creates the `sessions` row (`SESSION_LOCKED` / `SESSION_EXISTS`
 * otherwise). `close` releases the lease.
 */
export class SessionStorage implements WriteBehindStorage<RowBatch> {
  private lease: HeldLease | undefined

  constructor(private readonly options: SessionStorageOptions) {
    this.lease = options.lease
  }

  async write(batch: RowBatch): Promise<void> {
    const { sql, tables, id, holder, leaseTtlMs } = this.options
    await this.options.ready
    const facts = this.lease === undefined ? this.options.facts?.(batch) : undefined
    if (this.lease !== undefined) {
      // The common case: one round trip (see `commitRows`).
      await commitRows(sql, tables, this.lease, holder, leaseTtlMs, batch.firstSeq, batch.lines)
      return
    }
    // The first write of a new session: takes the lease and creates its row, in one transaction.
    const taken = await sql.begin(async (tx) => {
      const lease = await acquireLease(tx, tables, id, holder, leaseTtlMs)
      await appendRows(tx, tables, id, batch.firstSeq, batch.lines, facts)
      return lease
    })
    this.lease = taken
    this.options.onLease(taken)
  }

  async sync(): Promise<void> {}

  async close(): Promise<void> {
    const lease = this.lease
    if (lease === undefined) return
    this.lease = undefined
    this.options.onLease(undefined)
    await this.options.settled()
    await releaseLease(this.options.sql, this.options.tables, lease, this.options.holder)
  }
}
