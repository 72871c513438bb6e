import type { Sql, Tables } from './database'
import { lost, renewLeases, type HeldLease } from './lease'

interface Kept {
  lease: HeldLease
  /** Told when another process took the lease over: the holder's writes are fenced from now on. */
  onLost(error: Error): void
}

/**
 * The heartbeat (R-PG-2): renews every lease this process holds (writers'
 * and loads' alike) in one statement every third of the TTL, so a live
 * process keeps its sessions while a dead or paused one loses them within
 * the TTL. A lease found taken over is reported to its holder at once
 * (`LEASE_LOST`), which stops its writer; the epoch check of every write
 * fences it in any case, even when a renewal never ran (the process was
 * paused). A failed renewal (the server unreachable) is reported and retried
 * at the next beat.
 */
export class LeaseKeeper {
  private readonly kept = new Map<string, Kept>()
  private timer: NodeJS.Timeout | undefined
  private beating: Promise<void> | undefined

  constructor(
    private readonly sql: Sql,
    private readonly tables: Tables,
    private readonly holder: string,
    private readonly ttlMs: number,
    private readonly warn: (error: unknown) => void,
  ) {}

  keep(lease: HeldLease, onLost: (error: Error) => void): void {
    this.kept.set(lease.id, { lease, onLost })
    this.timer ??= setInterval(() => void this.beat(), Math.max(50, Math.floor(this.ttlMs / 3))).unref()
  }

  /** Stops renewing `id`'s lease (released, or lost). */
  drop(id: string): void {
    this.kept.delete(id)
    if (this.kept.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }

  has(id: string): boolean {
    return this.kept.has(id)
  }

  /** Resolves once a renewal under way has ended: a release after it cannot be undone by it. */
  settled(): Promise<void> {
    return this.beating ?? Promise.resolve()
  }

  /** Renews every kept lease once (also what the timer runs). */
  beat(): Promise<void> {
    this.beating ??= this.renew().finally(() => (this.beating = undefined))
    return this.beating
  }

  /** Stops the heartbeat (the leases are released by their holders). */
  stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
    this.kept.clear()
    return this.beating ?? Promise.resolve()
  }

  private async renew(): Promise<void> {
    const kept = [...this.kept.values()]
    if (kept.length === 0) return
    try {
      const gone = new Set(await renewLeases(this.sql, this.tables, kept.map((entry) => entry.lease), this.holder, this.ttlMs))
      for (const entry of kept) {
        if (!gone.has(entry.lease.id) || this.kept.get(entry.lease.id) !== entry) continue
        this.drop(entry.lease.id)
        entry.onLost(lost(entry.lease.id, entry.lease.epoch))
      }
    } catch (error) {
      this.warn(error)
    }
  }
}
