/**
 * Turns a `BenchReport` into the markdown that `pnpm bench` prints and
 * `docs/benchmarks.md` keeps: issue 18's done criterion first (pi-agent-core
 * / dsh on scenarios 1, 2 and 4), then the table of every metric, checked
 * against the budgets of docs/contracts.md#budgets.
 */
import type { BenchReport, ScenarioResult } from './run-bench.ts'
import { CRITERION_AIM, CRITERION_GOAL, budgetsOf, type Budget, type MetricSpec, type SubjectId } from './lib/scenario.ts'
import { scenarios } from './scenarios/index.ts'

export interface BudgetCheck {
  scenario: string
  metric: string
  budget: Budget
  /** The dsh median; undefined when dsh produced no figure. */
  value: number | undefined
  /** The budget is met. */
  ok: boolean
  /** Why dsh's runs were skipped (a precondition missing here): the budget was not measured, so it is not missed either. */
  skipped?: string
}

/**
 * Issue 18's done criterion on one scenario: pi-agent-core's cost over dsh's
 * (`pi / dsh`; for rates, dsh's rate over pi's), from the medians. The
 * verdict is on `ratio`, the standard (cold, wall-time) figure.
 */
export interface CriterionCheck {
  scenario: string
  title: string
  /** What the ratio compares (`per text turn`). */
  figure: string
  ratio: number | undefined
  cpuRatio: number | undefined
  steadyRatio: number | undefined
  steadyCpuRatio: number | undefined
  goal: number
  aim: number
  /** `ratio` ≥ `goal`. */
  pass: boolean
  /** `ratio` ≥ `aim`. */
  aimMet: boolean
}

const PEERS: ReadonlyArray<{ id: SubjectId; label: string }> = [
  { id: 'pi-agent-core', label: 'pi-agent-core' },
  { id: 'ai-sdk', label: 'AI SDK' },
]

function specOf(result: ScenarioResult) {
  return scenarios.find((s) => s.id === result.id)!
}

function meets(budget: Budget, value: number | undefined): boolean {
  return value !== undefined && (budget.op === '<=' ? value <= budget.limit : value >= budget.limit)
}

export function budgetChecks(report: BenchReport): BudgetCheck[] {
  const checks: BudgetCheck[] = []
  for (const result of report.scenarios) {
    const skipped = result.subjects.dsh?.skipped
    for (const metric of specOf(result).metrics) {
      for (const budget of budgetsOf(metric)) {
        const value = result.subjects.dsh?.median[metric.key]
        checks.push({ scenario: result.id, metric: metric.key, budget, value, ok: meets(budget, value), ...(skipped === undefined ? {} : { skipped }) })
      }
    }
  }
  return checks
}

/** The budgets measured and not met: a skipped scenario's budgets are not among them. */
export function missedBudgets(checks: readonly BudgetCheck[]): BudgetCheck[] {
  return checks.filter((check) => !check.ok && check.skipped === undefined)
}

/**
 * The peer's figure over dsh's for a cost (time, memory), dsh's over the
 * peer's for a rate: either way above 1 means dsh is faster or smaller.
 */
export function peerOverDsh(metric: Pick<MetricSpec, 'higherIsBetter'>, peer: number | undefined, dsh: number | undefined): number | undefined {
  if (peer === undefined || dsh === undefined || Number.isNaN(peer) || Number.isNaN(dsh) || peer === 0 || dsh === 0) return undefined
  return metric.higherIsBetter ? dsh / peer : peer / dsh
}

export function criterionChecks(report: BenchReport): CriterionCheck[] {
  const checks: CriterionCheck[] = []
  for (const result of report.scenarios) {
    const spec = specOf(result)
    if (!spec.criterion) continue
    const { criterion } = spec
    const ratio = (key: string | undefined) => {
      if (key === undefined) return undefined
      const metric = spec.metrics.find((m) => m.key === key)!
      return peerOverDsh(metric, result.subjects['pi-agent-core']?.median[key], result.subjects.dsh?.median[key])
    }
    const wall = ratio(criterion.wall)
    checks.push({
      scenario: result.id,
      title: result.title,
      figure: criterion.label,
      ratio: wall,
      cpuRatio: ratio(criterion.cpu),
      steadyRatio: ratio(criterion.steadyWall),
      steadyCpuRatio: ratio(criterion.steadyCpu),
      goal: CRITERION_GOAL,
      aim: CRITERION_AIM,
      pass: wall !== undefined && wall >= CRITERION_GOAL,
      aimMet: wall !== undefined && wall >= CRITERION_AIM,
    })
  }
  return checks
}

function number(value: number, digits: number): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

function withUnit(value: number | undefined, metric: Pick<MetricSpec, 'unit' | 'digits'>): string {
  if (value === undefined || Number.isNaN(value)) return '—'
  const unit = metric.unit === '' ? '' : metric.unit === '×' || metric.unit === '%' ? metric.unit : ` ${metric.unit}`
  return `${number(value, metric.digits)}${unit}`
}

function budgetCell(metric: MetricSpec, value: number | undefined, skipped: boolean): string {
  return budgetsOf(metric)
    .map((budget) => {
      const digits = Number.isInteger(budget.limit) ? 0 : String(budget.limit).split('.')[1]!.length
      const from = budget.source.startsWith('issue') ? ` (${budget.source})` : ''
      const mark = skipped ? '(not measured)' : meets(budget, value) ? '✅' : '❌'
      return `${budget.op === '<=' ? '≤' : '≥'} ${withUnit(budget.limit, { ...metric, digits })}${from} ${mark}`
    })
    .join(' · ')
}

/** A criterion ratio with its mark: ❌ below the goal, ✅ at or above it. */
function ratioCell(ratio: number | undefined, goal: number): string {
  return ratio === undefined ? '—' : `${number(ratio, 2)}× ${ratio >= goal ? '✅' : '❌'}`
}

function verdict(check: CriterionCheck): string {
  if (check.ratio === undefined) return '— (no figure)'
  if (check.aimMet) return `✅ aim met (≥ ${check.aim})`
  if (check.pass) return `✅ pass (≥ ${check.goal}; aim ${check.aim})`
  return `❌ miss (needs ${number(check.goal / check.ratio, 2)}× faster)`
}

/** Issue 18's done criterion as a short markdown section (empty when no criterion scenario ran). */
export function criterionMarkdown(checks: readonly CriterionCheck[]): string[] {
  if (checks.length === 0) return []
  const passed = checks.filter((c) => c.pass).length
  const lines = [
    `**Done criterion (issue 18): pi-agent-core / dsh ≥ ${number(CRITERION_GOAL, 1)} on scenarios 1, 2 and 4, aim ${CRITERION_AIM}: ${passed} of ${checks.length} pass** (verdict on the standard wall-time figure; CPU time and steady state beside it; above 1: dsh is faster).`,
    '',
    '| Scenario | Figure | pi / dsh (wall) | pi / dsh (CPU) | steady state (wall) | steady state (CPU) | Verdict |',
    '|---|---|---:|---:|---:|---:|---|',
  ]
  for (const check of checks) {
    const cells = [
      `**${check.title}**`,
      check.figure,
      ratioCell(check.ratio, check.goal),
      ratioCell(check.cpuRatio, check.goal),
      ratioCell(check.steadyRatio, check.goal),
      ratioCell(check.steadyCpuRatio, check.goal),
      verdict(check),
    ]
    lines.push(`| ${cells.join(' | ')} |`)
  }
  return lines
}

/** The markdown: a header naming the date, machine, Node and load; the criterion; the table; the footnotes. */
export function markdown(report: BenchReport): string {
  const m = report.machine
  const lines: string[] = []
  lines.push(
    `Measured ${report.date.slice(0, 10)} at ${report.revision} (${report.mode} mode, ${report.durationSeconds} s) on ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB, ${m.os}, Node ${m.node}${report.nodeFlags?.length ? ` with ${report.nodeFlags.join(' ')}` : ''}; 1-minute load average ${report.load.start} at the start, ${report.load.end} at the end.`,
  )
  lines.push('')
  const criterion = criterionMarkdown(criterionChecks(report))
  if (criterion.length > 0) lines.push(...criterion, '')
  lines.push('Medians of the runs; the ratio columns are peer / dsh for times and memory, dsh / peer for rates (chunks/s): above 1, dsh is faster or smaller.')
  lines.push('')
  lines.push('| Scenario | Metric | dsh | pi-agent-core | AI SDK | pi / dsh | AI SDK / dsh | Budget (dsh) |')
  lines.push('|---|---|---:|---:|---:|---:|---:|---|')
  const notes: string[] = []
  for (const result of report.scenarios) {
    const spec = specOf(result)
    const runCounts = Object.entries(result.subjects)
      .map(([subject, r]) => `${subject} ${r!.runs.length}`)
      .join(', ')
    notes.push(`- **${result.title}**: ${result.description}. Runs: ${runCounts}.`)
    for (const [subject, r] of Object.entries(result.subjects)) {
      if (r?.error) notes.push(`  - ${subject} could not run: ${r.error.split('\n')[0]}`)
      if (r?.skipped) notes.push(`  - ${subject} skipped: ${r.skipped}`)
    }
    const skipped = result.subjects.dsh?.skipped
    let first = true
    if (skipped !== undefined) {
      // One row saying why, in place of the figures; its budgets are not measured.
      const budgeted = spec.metrics.some((metric) => budgetsOf(metric).length > 0)
      lines.push(`| **${result.title}** | skipped: ${skipped.replaceAll('|', '\\|')} | — |  |  |  |  | ${budgeted ? 'not measured' : ''} |`)
      first = false
    }
    for (const metric of spec.metrics) {
      const dsh = result.subjects.dsh?.median[metric.key]
      const peer = PEERS.map(({ id }) => result.subjects[id]?.median[metric.key])
      if (dsh === undefined && peer.every((v) => v === undefined)) continue
      const ratios = peer.map((value) => {
        const ratio = metric.compare ? peerOverDsh(metric, value, dsh) : undefined
        return ratio === undefined ? '' : `${number(ratio, 2)}×`
      })
      const cells = [
        first ? `**${result.title}**` : '',
        metric.label,
        withUnit(dsh, metric),
        ...peer.map((v, i) => (PEERS[i]!.id in result.subjects ? withUnit(v, metric) : '')),
        ...ratios,
        budgetCell(metric, dsh, skipped !== undefined),
      ]
      first = false
      lines.push(`| ${cells.join(' | ')} |`)
    }
  }
  lines.push('')
  lines.push(...notes)
  const missed = missedBudgets(budgetChecks(report))
  const skippedScenarios = report.scenarios.filter((result) => result.subjects.dsh?.skipped !== undefined)
  lines.push('')
  lines.push(
    missed.length === 0
      ? skippedScenarios.length === 0
        ? 'Every budget is met.'
        : 'Every budget measured is met.'
      : `Budgets missed: ${missed.map((c) => `${c.scenario} ${c.metric} (${c.value === undefined ? 'no figure' : number(c.value, 2)} vs ${c.budget.op} ${c.budget.limit}${c.budget.source.startsWith('issue') ? `, ${c.budget.source}` : ''})`).join('; ')}.`,
  )
  if (skippedScenarios.length > 0) {
    lines.push(`Skipped, budgets not measured: ${skippedScenarios.map((result) => `${result.id} (${result.subjects.dsh!.skipped})`).join('; ')}.`)
  }
  return lines.join('\n')
}
