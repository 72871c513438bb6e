import { PostgresPersistenceError, databaseError } from './errors'
import type { Sql, Tables } from './database'
import { requireServer } from './server-version'

/** One schema change: applied once, in version order, inside the migration transaction. */
interface Migration {
  readonly version: number
  readonly description: string
  statements(tables: Tables): string[]
}

/**
 * The schema, as versioned steps (never edit a released step: add one).
 *
 * - `sessions`: one row per session, the cheap facts `list()` returns, kept
 *   current by every write (`updated_at`, `event_count`); `list()` reads
 *   them through the `updated_at` index.
 * - `events`: one row per event, `(session_id, seq)` its key, `line` the text
 *   dsh-session-jsonl would write (`text`, never `jsonb`).
 * - `leases`: the one writer of each session: `holder`, `epoch` (raised by
 *   each takeover by another holder) and `expires_at` (server time).
 *
 * Version 2 drops the foreign key from `events` to `sessions`: its check ran
 * once per inserted row (about a third of the server's time per appended
 * event), and it guarded nothing the writes do not already check: every
 * write advances the `sessions` row in the same transaction (no row, no
 * write), and `delete` removes a session's events itself.
 */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'sessions, events and leases',
    statements: (t) => [
      `CREATE TABLE ${t.sessions} (
        id text PRIMARY KEY,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        cwd text,
        parent_session text,
        event_count integer NOT NULL
      )`,
      `CREATE INDEX sessions_updated_at ON ${t.sessions} (updated_at DESC)`,
      `CREATE TABLE ${t.events} (
        session_id text NOT NULL REFERENCES ${t.sessions} (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        line text NOT NULL,
        PRIMARY KEY (session_id, seq)
      )`,
      `CREATE TABLE ${t.leases} (
        session_id text PRIMARY KEY,
        holder text NOT NULL,
        epoch bigint NOT NULL,
        expires_at timestamptz NOT NULL
      )`,
    ],
  },
  {
    version: 2,
    description: 'events without the per-row foreign key to sessions',
    statements: (t) => [`ALTER TABLE ${t.events} DROP CONSTRAINT IF EXISTS events_session_id_fkey`],
  },
]

/** The newest schema version this package knows. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version

/**
 * Brings the schema to `SCHEMA_VERSION`: idempotent and safe to run from many
 * processes at once. Everything happens in one transaction under a
 * transaction-scoped advisory lock keyed on the schema name, so concurrent
 * starters apply each step exactly once (the others wait, then find it
 * recorded in `migrations`). Rejects with `UNSUPPORTED_SERVER` before any
 * change when the server is older than PostgreSQL 14, with
 * `UNSUPPORTED_SCHEMA` when the database was migrated by a newer version of
 * this package, and
 * `DATABASE_FAILED` when a statement fails (nothing is applied then).
 */
export async function migrate(sql: Sql, tables: Tables): Promise<number> {
  try {
    return await sql.begin(async (tx) => {
      const [server] = await tx.unsafe<{ version: number }[]>(`SELECT current_setting('server_version_num')::integer AS version`)
      requireServer(server!.version)
      await tx.unsafe(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`dsh-session-postgres:${tables.schema}`])
      await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS "${tables.schema}"`)
      await tx.unsafe(
        `CREATE TABLE IF NOT EXISTS ${tables.migrations} (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      )
      const rows = await tx.unsafe<{ version: number }[]>(`SELECT version FROM ${tables.migrations} ORDER BY version`)
      const applied = new Set(rows.map((row) => row.version))
      const newest = rows.length === 0 ? 0 : rows[rows.length - 1]!.version
      if (newest > SCHEMA_VERSION) {
        throw new PostgresPersistenceError(
          'UNSUPPORTED_SCHEMA',
          `Schema "${tables.schema}" is at version ${newest}, newer than this @deepseek-ai/dsh-session-postgres knows (${SCHEMA_VERSION}); upgrade the package. Nothing was changed.`,
        )
      }
      for (const migration of MIGRATIONS) {
        if (applied.has(migration.version)) continue
        for (const statement of migration.statements(tables)) await tx.unsafe(statement)
        await tx.unsafe(`INSERT INTO ${tables.migrations} (version, description) VALUES ($1, $2)`, [migration.version, migration.description])
      }
      return SCHEMA_VERSION
    })
  } catch (error) {
    throw databaseError(error, `Migrating schema "${tables.schema}"`, undefined, 'No migration step was applied; the schema is as it was.')
  }
}
