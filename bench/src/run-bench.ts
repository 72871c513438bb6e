/**
 * The orchestrator: runs every selected scenario for every subject in fresh
 * child processes (`child.ts`), one at a time, and gathers the medians. Runs
 * of different subjects are interleaved (dsh, pi, AI SDK, dsh, pi…) so that a
 * change in the machine's load during the bench falls on all of them alike.
 */
import { fileURLToPath } from 'node:url'
import { runChild } from './lib/child-process.ts'
import { load, machine, revision, type Machine } from './lib/machine.ts'
import { median } from './lib/measure.ts'
import { SUBJECTS, type Metrics, type Mode, type SubjectId } from './lib/scenario.ts'
import { scenarios } from './scenarios/index.ts'

export interface BenchOptions {
  mode: Mode
  /** Scenario ids to run (default: all). */
  only?: readonly string[]
  /** Subjects to run (default: all); dsh always runs. */
  subjects?: readonly SubjectId[]
  /** Overrides every scenario's number of runs. */
  runs?: number
  /** Extra Node flags for every run's child, e.g. `--cpu-prof` to profile. */
  nodeFlags?: readonly string[]
  /** The Node binary every run's child uses (default: the one running the bench). */
  node?: string
  /** Overrides of scenario parameters, by scenario id (`{ streaming: { batch: 16 } }`). */
  params?: Readonly<Record<string, Readonly<Record<string, number>>>>
  /** How long one run's child may take before it is killed and the run fails (default `CHILD_TIMEOUT_MS`). */
  childTimeoutMs?: number
  /** Progress lines (stderr by default). */
  log?: (line: string) => void
}

export interface SubjectResult {
  runs: Metrics[]
  /** Per metric, the median over the runs. */
  median: Metrics
  /** Why the subject could not run (peers only: a dsh failure fails the bench). */
  error?: string
  /**
   * Why its runs were skipped: the scenario found a precondition missing
   * here (`ScenarioSkipped`), so there is no figure and its budgets are not
   * checked. Only the first run is tried.
   */
  skipped?: string
}

export interface ScenarioResult {
  id: string
  title: string
  description: string
  params: object
  subjects: Partial<Record<SubjectId, SubjectResult>>
}

export interface BenchReport {
  date: string
  mode: Mode
  /** The Node binary of the runs, when `--node` chose one. */
  nodePath?: string
  /** Extra Node flags of the runs' children, when any were given. */
  nodeFlags?: readonly string[]
  /** The commit measured (see `revision()`). */
  revision: string
  machine: Machine
  /** The 1-minute load average at the start and the end of the bench. */
  load: { start: number; end: number }
  durationSeconds: number
  scenarios: ScenarioResult[]
}

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url))

function medians(runs: readonly Metrics[]): Metrics {
  const keys = new Set(runs.flatMap((run) => Object.keys(run)))
  const out: Metrics = {}
  for (const key of keys) out[key] = median(runs.map((run) => run[key]).filter((v): v is number => typeof v === 'number'))
  return out
}

export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`))
  const started = performance.now()
  const report: BenchReport = {
    date: new Date().toISOString(),
    mode: options.mode,
    ...(options.node === undefined ? {} : { nodePath: options.node }),
    ...(options.nodeFlags?.length ? { nodeFlags: options.nodeFlags } : {}),
    revision: revision(),
    machine: machine(options.node),
    load: { start: load(), end: 0 },
    durationSeconds: 0,
    scenarios: [],
  }
  const wanted = new Set<SubjectId>(['dsh', ...(options.subjects ?? SUBJECTS)])
  if (options.only !== undefined && options.only.length === 0) throw new Error(`--only names no scenario; known: ${scenarios.map((s) => s.id).join(', ')}`)
  const selected = options.only ? scenarios.filter((s) => options.only!.includes(s.id)) : scenarios
  for (const id of options.only ?? []) if (!scenarios.some((s) => s.id === id)) throw new Error(`unknown scenario "${id}"; known: ${scenarios.map((s) => s.id).join(', ')}`)
  for (const id of Object.keys(options.params ?? {})) if (!scenarios.some((s) => s.id === id)) throw new Error(`parameters given for an unknown scenario "${id}"`)

  for (const scenario of selected) {
    const params = { ...scenario.params(options.mode), ...options.params?.[scenario.id] }
    for (const key of Object.keys(options.params?.[scenario.id] ?? {})) {
      if (!(key in scenario.params(options.mode))) throw new Error(`scenario "${scenario.id}" has no parameter "${key}"`)
    }
    const subjects = scenario.subjects.filter((s) => wanted.has(s))
    const result: ScenarioResult = { id: scenario.id, title: scenario.title, description: scenario.describe(params), params, subjects: {} }
    report.scenarios.push(result)
    log(`${scenario.title}: ${result.description}`)
    const runs = new Map(subjects.map((s) => [s, options.runs ?? scenario.runs(options.mode, s)]))
    const collected = new Map<SubjectId, Metrics[]>(subjects.map((s) => [s, []]))
    const failed = new Map<SubjectId, string>()
    const skipped = new Map<SubjectId, string>()
    const most = Math.max(...runs.values())
    for (let round = 0; round < most; round++) {
      for (const subject of subjects) {
        if (round >= runs.get(subject)! || failed.has(subject) || skipped.has(subject)) continue
        const t0 = performance.now()
        try {
          const { result: metrics, skipped: reason } = await runChild(CHILD, [scenario.id, subject, JSON.stringify(params)], options.nodeFlags, options.node, options.childTimeoutMs)
          if (reason !== undefined) {
            skipped.set(subject, reason)
            log(`  ${subject} skipped: ${reason}`)
            continue
          }
          collected.get(subject)!.push(metrics as Metrics)
          log(`  ${subject} run ${round + 1}/${runs.get(subject)} (${((performance.now() - t0) / 1000).toFixed(1)} s): ${summary(metrics as Metrics)}`)
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error)
          if (subject === 'dsh') throw error
          failed.set(subject, message)
          log(`  ${subject} failed: ${message.split('\n')[0]}`)
        }
      }
    }
    for (const subject of subjects) {
      const list = collected.get(subject)!
      result.subjects[subject] = {
        runs: list,
        median: medians(list),
        ...(failed.has(subject) ? { error: failed.get(subject) } : {}),
        ...(skipped.has(subject) ? { skipped: skipped.get(subject) } : {}),
      }
    }
  }
  report.load.end = load()
  report.durationSeconds = Math.round((performance.now() - started) / 1000)
  return report
}

function summary(metrics: Metrics): string {
  return Object.entries(metrics)
    .map(([key, value]) => `${key}=${Number.isInteger(value) ? value : value.toPrecision(4)}`)
    .join(' ')
}
