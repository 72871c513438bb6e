import { it } from 'vitest'
import { Context } from 'cordis'
import Sessions from '@deepseek-ai/dsh-session'
import PostgresSessionPersistence from '@deepseek-ai/dsh-session-postgres'
import { describePersistenceContract } from '@deepseek-ai/dsh-testkit'
import { dropSchema, freshSchema, pgUrl, server, withSql } from './helpers'

/**
 * The shared contract, on PostgreSQL. Each harness gets its own schema.
 * `reopen()` stands for a process that crashed and restarted: a new backend
 * (a new lease holder) on the same schema, while every lease the old one
 * holds is taken over by a holder that is gone (as the expiry of a dead
 * process's lease lets the next process do), so the old backend is fenced:
 * nothing it still had queued can reach what the new one reads.
 */
if ('url' in server) {
  const url = server.url
  describePersistenceContract('postgres', async () => {
    const schema = freshSchema()
    const ctx = new Context()
    await ctx.plugin(Sessions)
    const mounted = [ctx.plugin(PostgresSessionPersistence, { url, schema, flushIntervalMs: 60_000 })]
    await mounted[0]
    return {
      backend: ctx.sessionPersistence,
      ctx,
      async reopen() {
        await withSql(url, (sql) =>
          sql.unsafe(`UPDATE "${schema}".leases SET holder = 'crashed', epoch = epoch + 1, expires_at = clock_timestamp() - interval '1 hour'`),
        )
        const next = new Context()
        const fiber = next.plugin(PostgresSessionPersistence, { url, schema, flushIntervalMs: 60_000 })
        mounted.push(fiber)
        await fiber
        return next.sessionPersistence
      },
      damage: undefined,
      async cleanup() {
        for (const fiber of mounted) await fiber.dispose()
        await dropSchema(url, schema)
      },
    }
  })
} else {
  it('SessionPersistence contract: postgres', ({ skip }) => {
    pgUrl(skip)
  })
}
