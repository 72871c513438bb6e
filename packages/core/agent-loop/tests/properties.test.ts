import fc from 'fast-check'
import { describe, it } from 'vitest'
import { assertProperty } from './property/driver'
import { programs, runProgram } from './property/run-program'

/**
 * Property tests of the loop (spec §15). Random programs of followup / queue /
 * steer / inject (with and without contexts and placements), malformed input,
 * cancel (with and without keepInbox), dispose, reasoning-effort and tool-set
 * changes, checkpoint listeners that fail (a synchronous throw, or a
 * rejection after a wait), reactions armed on session events and on the
 * agent's own notifications (`agent/status`, `agent/inbox/*`,
 * `agent/cancel-requested`, `agent/error`), maintenance tasks (exclusive
 * with turns, injections held while they run), continuation stops
 * (terminal, authoritative through the close; or natural), and pauses run against model
 * calls that answer, call tools, fail
 * (error finish, throw mid-stream, no finish; an adapter that throws
 * synchronously, returns something that is not an async iterable, or yields
 * a chunk of no known type) or stop at max-tokens, and
 * tools that succeed, fail, run slowly, stop on cancel or run exclusively.
 * A fast-check scheduler interleaves the commands with every stream chunk,
 * tool body and checkpoint listener; then the invariants of
 * `property/invariants.ts` are checked on the session log, the recorded
 * requests and the agent's public state.
 *
 * A failure prints the replay command (FC_SEED, FC_PATH, FC_REPLAY_PATH) first; FC_RUNS
 * raises the budget for a local soak.
 */
const RUNS = 300
// About 0.1 s per run on a loaded 2-core machine; generous so a soak (FC_RUNS) does not time out.
const TIMEOUT = Math.max(120_000, Number(process.env.FC_RUNS ?? RUNS) * 500)

const cases = [
  {
    name: 'any program leaves a well-formed log, a consistent inbox and honest requests when the agent goes idle',
    focus: 'mixed',
    dispose: false,
  },
  {
    name: 'dispose at any point of any program settles everything, discards what is pending, and nothing happens after it resolves',
    focus: 'mixed',
    dispose: true,
  },
  {
    name: 'cancels inside tool rounds keep every call answered in model order and the history a valid request (R-CAN-4, R-CAN-6)',
    focus: 'batches',
    dispose: false,
  },
  {
    name: 'dispose inside tool rounds waits for running tools and closes every step and turn (R-CAN-5, R-LIFE-5)',
    focus: 'batches',
    dispose: true,
  },
] as const

describe('agent loop properties (R-SES-4, R-IN, R-LOOP, R-TOOL-3, R-CAN, R-ERR)', () => {
  for (const { name, focus, dispose } of cases) {
    it(
      name,
      () =>
        assertProperty(
          name,
          fc.asyncProperty(fc.scheduler(), programs(focus, dispose), (s, program) => runProgram(s, program, dispose)),
          RUNS,
        ),
      TIMEOUT,
    )
  }
})
