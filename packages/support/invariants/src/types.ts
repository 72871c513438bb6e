/** One broken invariant. Plain JSON, safe to log. */
export interface InvariantViolation {
  /** The registered name of the invariant, e.g. `'agent-loop/request-reconstruction'`. */
  invariant: string
  /** What is wrong, in a sentence a person can act on. */
  message: string
  /** Optional structured evidence (ids, seqs, expected/actual). */
  details?: unknown
}

/**
 * A check: returns (or resolves to) the violations it found, as objects or
 * plain messages, or one message as a string; nothing (or an empty string)
 * means it holds. A check that throws is itself reported as a violation of
 * its invariant.
 */
export type InvariantCheck = () =>
  | Iterable<InvariantViolation | string>
  | void
  | Promise<Iterable<InvariantViolation | string> | void>

export type InvariantPolicy = 'throw' | 'log' | 'collect'
