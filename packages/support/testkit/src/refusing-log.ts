import type { Agent } from '@deepseek-ai/dsh-agent'
import { SessionError, type Session } from '@deepseek-ai/dsh-session'

/** One `session.append` call as `refusingLog` saw it. */
export interface AppendAttempt {
  readonly type: string
  readonly data: unknown
  /** Whether the test made the log refuse it. */
  readonly refused: boolean
}

/** What `refusingLog` records. */
export interface RefusingLogRecord {
  readonly attempts: AppendAttempt[]
  /** Set when the loop went on appending past the limit (a runaway retry); the test asserts it is false. */
  runaway: boolean
}

/**
 * Makes `agent.session` refuse chosen appends the way the log refuses an
 * invalid event: `refuse(type, data, attempt)` is asked for every append
 * (`attempt` is its 0-based number) and `true` throws a `SessionError`
 * (`INVARIANT`) instead of appending. Every attempt is recorded.
 *
 * A loop that retries without end would never give the test back (it spins
 * on microtasks): after `limit` attempts the log refuses everything, moves the
 * agent to its `disposing` stage so that its drain ends (see `stopDrain`), and
 * sets `runaway`, which the test then asserts is false.
 */
export function refusingLog(agent: Agent, refuse: (type: string, data: unknown, attempt: number) => boolean, limit = 5_000): RefusingLogRecord {
  const session = agent.session
  const append = session.append.bind(session)
  const record: RefusingLogRecord = { attempts: [], runaway: false }
  ;(session as { append: Session['append'] }).append = ((type: string, data: unknown) => {
    const attempt = record.attempts.length
    if (attempt >= limit) {
      record.runaway = true
      stopDrain(agent)
      throw new SessionError('INVARIANT', `the test stopped a runaway loop after ${limit} appends`)
    }
    const refused = refuse(type, data, attempt)
    record.attempts.push({ type, data, refused })
    if (refused) throw new SessionError('INVARIANT', `cannot append ${type} at seq ${session.events.length}: refused by the test`)
    return append(type as never, data as never)
  }) as Session['append']
  return record
}

/**
 * Ends the drain of a runaway loop the only way a test can from outside: by
 * moving dsh-agent-loop's agent to its `disposing` lifecycle stage, which its
 * drain checks before each round (without running the teardown). This reaches
 * into the loop's internals on purpose, and only on the runaway path; an agent
 * of another driver, without that stage, is left alone (its test then fails on
 * the timeout instead).
 */
function stopDrain(agent: Agent): void {
  const lifecycle = (agent as unknown as { lifecycle?: { to?(stage: string): void } }).lifecycle
  if (typeof lifecycle?.to === 'function') lifecycle.to('disposing')
}
