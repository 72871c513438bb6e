import { JsonlSessionPersistence } from './service'

export { JsonlSessionPersistence }
export { JsonlPersistenceError } from './errors'
export type { JsonlErrorCode, JsonlErrorCodeMap } from './errors'
export { FORMAT_VERSION } from './line-format'
export { isSafeSessionId } from './session-paths'
export default JsonlSessionPersistence
