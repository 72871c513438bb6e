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

/** A budget of spec §13 on one metric of the `dsh` subject. */
export interface Budget {
  readonly op: '<=' | '>='
  readonly limit: number
  /** Where the budget comes from (`§13`, `R-PERF-1`). */
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
  readonly budget?: Budget
}

export interface Scenario<P extends object = object> {
  /** Kebab-case id: the key in `latest.json` and the value of `--only`. */
  readonly id: string
  /** The heading in the table (`1. Turn overhead`). */
  readonly title: string
  /** What one run does, in a sentence, with the sizes of `params`. */
  describe(params: P): string
  readonly subjects: readonly SubjectId[]
  readonly metrics: readonly MetricSpec[]
  params(mode: Mode): P
  /** How many child processes (runs) per subject; the table shows the median. */
  runs(mode: Mode, subject: SubjectId): number
  /** Runs once, in a child process started with `--expose-gc`. */
  run(subject: SubjectId, params: P): Promise<Metrics>
}

export function defineScenario<P extends object>(scenario: Scenario<P>): Scenario<P> {
  return scenario
}
