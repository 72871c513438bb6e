/**
 * The shape every bench scenario has. A scenario file default-exports one
 * `Scenario`: the orchestrator reads its metadata in the parent process and
 * calls `run` in a fresh child process per run, so runs share no JIT state,
 * heap or RSS.
 */

/** The agent loops the bench can drive. `dsh` is ours; the others are peers. */
export type SubjectId = 'dsh' | 'pi-agent-core' | 'ai-sdk'

export const SUBJECTS: readonly SubjectId[] = ['dsh', 'pi-agent-core', 'ai-sdk']

/** `full`: the sizes of spec §13. `smoke`: tiny sizes that only prove every scenario runs (CI). */
export type Mode = 'full' | 'smoke'

/** One run's figures, by metric key. A metric a subject cannot report is left out. */
export type Metrics = Record<string, number>

/** A budget on one metric of the `dsh` subject (docs/contracts.md#budgets, or an issue's ceiling). */
export interface Budget {
  readonly op: '<=' | '>='
  readonly limit: number
  /** Where the budget comes from (`§13`, `R-PERF-1`, `issue 18`). */
  readonly source: string
}

/** How a metric is shown in the table. */
export interface MetricSpec {
  readonly key: string
  readonly label: string
  readonly unit: string
  /** Fraction digits in the table. */
  readonly digits: number
  /** Whether a peer/dsh ratio is meaningful for this metric (time or memory of the same workload). */
  readonly compare: boolean
  /**
   * A rate (chunks per second): more is better, so the ratio columns divide
   * dsh's figure by the peer's, which is the peer's time per item over dsh's,
   * and above 1 still means dsh is faster.
   */
  readonly higherIsBetter?: boolean
  /** One budget, or several (each checked and shown). */
  readonly budget?: Budget | readonly Budget[]
}

/** The budgets of a metric as a list. */
export function budgetsOf(metric: MetricSpec): readonly Budget[] {
  if (metric.budget === undefined) return []
  return Array.isArray(metric.budget) ? metric.budget : [metric.budget as Budget]
}

/**
 * Issue 18's done criterion on a scenario: pi-agent-core's cost over dsh's
 * (`pi / dsh`) at least `CRITERION_GOAL`, aiming for `CRITERION_AIM`. The
 * verdict is taken on `wall`, the standard figure; the others are shown
 * beside it.
 */
export interface CriterionSpec {
  /** The figure the ratio is about (`per text turn`). */
  readonly label: string
  readonly wall: string
  readonly cpu: string
  readonly steadyWall?: string
  readonly steadyCpu?: string
}

export const CRITERION_GOAL = 1.0
export const CRITERION_AIM = 1.5

export interface Scenario<P extends object = object> {
  /** Kebab-case id: the key in `latest.json` and the value of `--only`. */
  readonly id: string
  /** The heading in the table (`1. Turn overhead`). */
  readonly title: string
  /** What one run does, in a sentence, with the sizes of `params`. */
  describe(params: P): string
  readonly subjects: readonly SubjectId[]
  readonly metrics: readonly MetricSpec[]
  /** Issue 18's done criterion, on the scenarios it names (1, 2 and 4). */
  readonly criterion?: CriterionSpec
  params(mode: Mode): P
  /** How many child processes (runs) per subject; the table shows the median. */
  runs(mode: Mode, subject: SubjectId): number
  /**
   * Runs once, in a child process started with `--expose-gc`. Throws
   * `ScenarioSkipped` when a precondition is missing here.
   */
  run(subject: SubjectId, params: P): Promise<Metrics>
}

/**
 * What a scenario's `run` throws when something it needs is missing on this
 * machine (a server, a variable), before it measured anything: the run is
 * reported as skipped with `reason` (one line on the console, a row in the
 * table, `skipped` in the JSON), no further run of that subject is tried,
 * and its budgets are shown as not measured, never as missed. `reason` says
 * what is missing and how to provide it, in one line, without secrets.
 */
export class ScenarioSkipped extends Error {
  readonly code = 'SCENARIO_SKIPPED'

  constructor(readonly reason: string) {
    super(`skipped: ${reason}`)
    this.name = 'ScenarioSkipped'
  }
}

export function defineScenario<P extends object>(scenario: Scenario<P>): Scenario<P> {
  return scenario
}
