import { PostgresSessionPersistence } from './service'

export { PostgresSessionPersistence }
export { MAX_LEASE_TTL_MS } from './service'
export { PostgresPersistenceError } from './errors'
export type { PostgresErrorCode, PostgresErrorCodeMap } from './errors'
export { FORMAT_VERSION, serializeEvent } from './line-format'
export { SCHEMA_VERSION } from './migrations'
export type { WatchOptions } from './watch-session'
export default PostgresSessionPersistence
