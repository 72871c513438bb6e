import fc from 'fast-check'
import { setImmediate as macrotask } from 'node:timers/promises'

/**
 * How a property run is budgeted and replayed.
 *
 * `FC_SEED` and `FC_PATH` replay one failing case exactly, together with
 * `FC_REPLAY_PATH`, the `replayPath` that fast-check prints inside the
 * counterexample's command list (it tells `fc.commands` which commands ran,
 * which the shrink path depends on). `FC_RUNS` overrides the run budget, e.g.
 * for a long local soak. Without them every property runs its fixed CI budget
 * from a seed that fast-check picks, and prints it when it fails.
 */
export function runParameters(defaultRuns: number): fc.Parameters<unknown> {
  const parameters: fc.Parameters<unknown> = { numRuns: Number(process.env.FC_RUNS ?? defaultRuns) }
  if (process.env.FC_SEED !== undefined) parameters.seed = Number(process.env.FC_SEED)
  if (process.env.FC_PATH !== undefined) parameters.path = process.env.FC_PATH
  return parameters
}

/** The commands' `replayPath` to replay with (`FC_REPLAY_PATH`), if any. */
export const commandsReplayPath: string | undefined = process.env.FC_REPLAY_PATH

/**
 * Checks `property` and throws fast-check's own report (seed, path, the
 * shrunk counterexample with its scheduler log, the error) with the exact
 * replay command in front of it.
 */
export async function assertProperty(name: string, property: fc.IAsyncProperty<any>, defaultRuns: number): Promise<void> {
  const details = await fc.check(property, runParameters(defaultRuns))
  if (!details.failed) return
  const report = fc.defaultReportMessage(details) ?? 'property failed'
  const replayPath = /replayPath="([^"]*)"/.exec(report)?.[1]
  const replay =
    `Replay this case: ${process.env.FC_OPEN_BUGS ? `FC_OPEN_BUGS=${JSON.stringify(process.env.FC_OPEN_BUGS)} ` : ''}` +
    `FC_SEED=${details.seed} FC_PATH=${JSON.stringify(details.counterexamplePath ?? '')}` +
    `${replayPath ? ` FC_REPLAY_PATH=${JSON.stringify(replayPath)}` : ''} ` +
    `npx vitest run --project core/agent-loop tests/properties.test.ts -t ${JSON.stringify(name)}`
  const error = details.errorInstance
  const cause = error instanceof Error ? (error.stack ?? error.message) : String(error)
  throw new Error(`${replay}\n\n${report}\n\nThe failure:\n${cause}`)
}

/** A scheduler tick: resolves when the scheduler releases it, so every interleaving point has a label. */
export function tick(s: fc.Scheduler, label: string): Promise<void> {
  return s.schedule(Promise.resolve(), label)
}

/**
 * Releases scheduled tasks until `target` settles, and returns (or throws)
 * what it settled with. Between two releases the system gets `pace`
 * microtask turns of its own: a low pace releases the next task while the
 * loop is still in the middle of a chain of awaits, a high pace lets it reach
 * its next scheduled wait first, so different paces explore different
 * interleavings of the same program.
 *
 * Everything the loop does runs on microtasks or on scheduled tasks, so when
 * nothing is scheduled and a full macrotask turn (`setImmediate`, not a
 * timer) passes without `target` settling, nothing can ever settle it: that
 * is a deadlock, reported as a failure instead of a hanging test.
 */
export async function settle<T>(s: fc.Scheduler, target: Promise<T>, what: string, pace = 50): Promise<T> {
  let settled = false
  const tracked = target.then(
    (value) => {
      settled = true
      return value
    },
    (error: unknown) => {
      settled = true
      throw error
    },
  )
  tracked.catch(() => {})
  let quiet = 0
  while (!settled) {
    for (let i = 0; i < pace && !settled; i++) await Promise.resolve()
    if (settled) break
    if (s.count() > 0) {
      quiet = 0
      await s.waitOne()
      continue
    }
    await macrotask()
    if (!settled && s.count() === 0 && ++quiet >= 3) {
      throw new Error(`${what} never settled: nothing is scheduled and nothing progresses (a deadlock in the loop)`)
    }
  }
  return tracked
}

/** Releases every task still scheduled (and those they schedule), then lets microtasks and one macrotask turn run. */
export async function drainScheduler(s: fc.Scheduler): Promise<void> {
  for (let round = 0; round < 3; round++) {
    while (s.count() > 0) await s.waitOne()
    await macrotask()
  }
}
