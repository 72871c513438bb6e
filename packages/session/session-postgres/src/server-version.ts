import { PostgresPersistenceError } from './errors'

/** The oldest server this package runs on (`server_version_num`): PostgreSQL 14, for `string_to_table`. */
export const OLDEST_SERVER = 140000

/**
 * Refuses a server older than PostgreSQL 14 (`UNSUPPORTED_SERVER`), given
 * its `server_version_num` (`150018` for 15.18): every write splits its rows
 * with `string_to_table`, which older servers lack, so this is checked once,
 * when the schema is migrated, instead of failing each write.
 */
export function requireServer(versionNum: number): void {
  if (versionNum >= OLDEST_SERVER) return
  // From 10 on the major is the first part (130011 is 13.11); before it, the first two (90624 is 9.6.24).
  const major = Math.floor(versionNum / 10000)
  const name = major >= 10 ? `${major}` : `${major}.${Math.floor(versionNum / 100) % 100}`
  throw new PostgresPersistenceError(
    'UNSUPPORTED_SERVER',
    `The server is PostgreSQL ${name}; @deepseek-ai/dsh-session-postgres needs PostgreSQL 14 or newer. Nothing was changed.`,
  )
}
