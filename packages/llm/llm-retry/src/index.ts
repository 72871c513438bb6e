export type {} from './events'
import { LlmRetry } from './service'

export default LlmRetry
export { LlmRetry }
export { DEFAULT_BUDGETS } from './budgets'
export { backoffDelay } from './backoff'
