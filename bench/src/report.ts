/**
 * Turns a `BenchReport` into the markdown table that `pnpm bench` prints and
 * `docs/benchmarks.md` keeps, and checks the dsh figures against the budgets
 * of spec §13.
 */
import type { BenchReport } from './run-bench.ts'
import type { Budget, MetricSpec, SubjectId } from './lib/scenario.ts'
import { scenarios } from './scenarios/index.ts'

export interface BudgetCheck {
  scenario: string
  metric: string
  budget: Budget
  /** The dsh median; undefined when dsh produced no figure. */
  value: number | undefined
  ok: boolean
}

const PEERS: ReadonlyArray<{ id: SubjectId; label: string }> = [
  { id: 'pi-agent-core', label: 'pi-agent-core' },
  { id: 'ai-sdk', label: 'AI SDK' },
]

export function budgetChecks(report: BenchReport): BudgetCheck[] {
  const checks: BudgetCheck[] = []
  for (const result of report.scenarios) {
    const spec = scenarios.find((s) => s.id === result.id)!
    for (const metric of spec.metrics) {
      if (!metric.budget) continue
      const value = result.subjects.dsh?.median[metric.key]
      const ok = value !== undefined && (metric.budget.op === '<=' ? value <= metric.budget.limit : value >= metric.budget.limit)
      checks.push({ scenario: result.id, metric: metric.key, budget: metric.budget, value, ok })
    }
  }
  return checks
}

function number(value: number, digits: number): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

function withUnit(value: number | undefined, metric: MetricSpec): string {
  if (value === undefined || Number.isNaN(value)) return '—'
  const unit = metric.unit === '' ? '' : metric.unit === '×' || metric.unit === '%' ? metric.unit : ` ${metric.unit}`
  return `${number(value, metric.digits)}${unit}`
}

function budgetCell(metric: MetricSpec, value: number | undefined): string {
  if (!metric.budget) return ''
  const { op, limit } = metric.budget
  const ok = value !== undefined && (op === '<=' ? value <= limit : value >= limit)
  const digits = Number.isInteger(limit) ? 0 : String(limit).split('.')[1]!.length
  return `${op === '<=' ? '≤' : '≥'} ${withUnit(limit, { ...metric, digits })} ${ok ? '✅' : '❌'}`
}

/** The markdown table, with a header naming the date, machine and load, and the footnotes. */
export function markdown(report: BenchReport): string {
  const m = report.machine
  const lines: string[] = []
  lines.push(`Measured ${report.date.slice(0, 10)} at ${report.revision} (${report.mode} mode, ${report.durationSeconds} s) on ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB, ${m.os}, Node ${m.node}; 1-minute load average ${report.load.start} at the start, ${report.load.end} at the end.`)
  lines.push('')
  lines.push('Medians of the runs; the ratio columns are peer / dsh (above 1: dsh is faster or smaller).')
  lines.push('')
  lines.push('| Scenario | Metric | dsh | pi-agent-core | AI SDK | pi / dsh | AI SDK / dsh | Budget (dsh) |')
  lines.push('|---|---|---:|---:|---:|---:|---:|---|')
  const notes: string[] = []
  for (const result of report.scenarios) {
    const spec = scenarios.find((s) => s.id === result.id)!
    const runCounts = Object.entries(result.subjects)
      .map(([subject, r]) => `${subject} ${r!.runs.length}`)
      .join(', ')
    notes.push(`- **${result.title}**: ${result.description}. Runs: ${runCounts}.`)
    for (const [subject, r] of Object.entries(result.subjects)) {
      if (r?.error) notes.push(`  - ${subject} could not run: ${r.error.split('\n')[0]}`)
    }
    spec.metrics.forEach((metric, index) => {
      const dsh = result.subjects.dsh?.median[metric.key]
      const peer = PEERS.map(({ id }) => result.subjects[id]?.median[metric.key])
      if (dsh === undefined && peer.every((v) => v === undefined)) return
      const ratios = peer.map((value) => (metric.compare && value !== undefined && dsh ? `${number(value / dsh, 2)}×` : ''))
      const cells = [
        index === 0 ? `**${result.title}**` : '',
        `${metric.label}`,
        withUnit(dsh, metric),
        ...peer.map((v, i) => (PEERS[i]!.id in result.subjects ? withUnit(v, metric) : '')),
        ...ratios,
        budgetCell(metric, dsh),
      ]
      lines.push(`| ${cells.join(' | ')} |`)
    })
  }
  lines.push('')
  lines.push(...notes)
  const missed = budgetChecks(report).filter((check) => !check.ok)
  lines.push('')
  lines.push(
    missed.length === 0
      ? 'Every budget of spec §13 is met.'
      : `Budgets missed: ${missed.map((c) => `${c.scenario} ${c.metric} (${c.value === undefined ? 'no figure' : number(c.value, 2)} vs ${c.budget.op} ${c.budget.limit})`).join('; ')}.`,
  )
  return lines.join('\n')
}
