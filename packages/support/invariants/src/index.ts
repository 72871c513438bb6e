import { Invariants } from './service'

export default Invariants
export { Invariants }
export { InvariantError } from './errors'
export type { InvariantCheck, InvariantPolicy, InvariantViolation } from './types'
