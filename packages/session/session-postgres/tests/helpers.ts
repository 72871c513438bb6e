import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { Context } from 'cordis'
import Sessions from '@deepseek-ai/dsh-session'
import PostgresSessionPersistence from '@deepseek-ai/dsh-session-postgres'

export const repoRoot = fileURLToPath(new URL('../../../..', import.meta.url))

/**
 * Whether the tests have a server: `DSH_PG_URL` names one that answers. Without
 * it the PostgreSQL tests skip with this reason, unless `DSH_PG_REQUIRED=1`
 * (CI), which makes a missing server a failure.
 */
export const server: { url: string } | { reason: string } = await probe()

async function probe(): Promise<{ url: string } | { reason: string }> {
  const url = process.env.DSH_PG_URL
  if (!url) return { reason: 'DSH_PG_URL is not set; point it at a PostgreSQL database to run the dsh-session-postgres tests (see the README)' }
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} })
  try {
    await sql`SELECT 1`
    return { url }
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).name
    return { reason: `the PostgreSQL server named by DSH_PG_URL did not answer (${code})` }
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {})
  }
}

/**
 * The server's URL for a test, or the test is skipped saying why; with
 * `DSH_PG_REQUIRED=1` a missing server fails the test instead.
 */
export function pgUrl(skip: (condition: boolean, note?: string) => void): string {
  if ('url' in server) return server.url
  if (process.env.DSH_PG_REQUIRED === '1') throw new Error(`DSH_PG_REQUIRED=1 but ${server.reason}`)
  skip(true, server.reason)
  throw new Error('unreachable')
}

/** A schema name no other test uses. */
export function freshSchema(): string {
  return `t_${randomBytes(6).toString('hex')}`
}

/** Drops `schema` and everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await sql.end({ timeout: 5 })
  }
}

/** Runs `work` with a one-connection client on `url`. */
export async function withSql<T>(url: string, work: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    return await work(sql)
  } finally {
    await sql.end({ timeout: 5 })
  }
}

/** A context with dsh-session and this backend on `schema`. */
export async function mount(url: string, schema: string, config: Partial<PostgresSessionPersistence.Config> = {}) {
  const ctx = new Context()
  await ctx.plugin(Sessions)
  const fiber = ctx.plugin(PostgresSessionPersistence, { url, schema, flushIntervalMs: 60_000, ...config })
  await fiber
  return { ctx, fiber, backend: ctx.sessionPersistence as PostgresSessionPersistence }
}

/** Polls `check` until it returns something other than `undefined` (a generous ceiling, never a timing assertion). */
export async function until<T>(check: () => Promise<T | undefined> | T | undefined, what: string, ceilingMs = 25_000): Promise<T> {
  const deadline = Date.now() + ceilingMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
