import type { InvariantViolation } from './types'

/** Thrown under the `throw` policy; `violations` lists everything found. */
export class InvariantError extends Error {
  override readonly name = 'InvariantError'
  readonly code = 'INVARIANT_VIOLATION'
  constructor(readonly violations: readonly InvariantViolation[]) {
    super(
      `${violations.length} invariant violation(s):\n` +
        violations.map((v) => `  - [${v.invariant}] ${v.message}`).join('\n'),
    )
  }
}
