/**
 * `pnpm bench` / `pnpm bench:smoke`: runs the scenarios, prints the markdown
 * table on stdout (progress on stderr) and writes the raw figures as JSON.
 *
 *   pnpm bench [--smoke] [--only growth,resume] [--subjects dsh,pi-agent-core] [--runs 3] [--out file.json] [--strict] [--profile]
 *
 * `--profile` runs every child with `--cpu-prof` into `bench/results/profiles/`;
 * `src/profile-summary.ts` lists a profile's top self-time functions.
 *
 * Exit code 0 even when a budget is missed (the table says so); 1 when a dsh
 * run fails, or with `--strict` when a budget is missed.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { budgetChecks, markdown } from './report.ts'
import { runBench } from './run-bench.ts'
import { SUBJECTS, type SubjectId } from './lib/scenario.ts'

const { values } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    only: { type: 'string' },
    subjects: { type: 'string' },
    runs: { type: 'string' },
    out: { type: 'string' },
    strict: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
  },
})

const list = (value: string | undefined) => value?.split(',').map((s) => s.trim()).filter(Boolean)
const subjects = list(values.subjects)
for (const subject of subjects ?? []) {
  if (!SUBJECTS.includes(subject as SubjectId)) throw new Error(`unknown subject "${subject}"; known: ${SUBJECTS.join(', ')}`)
}
const runs = values.runs === undefined ? undefined : Number(values.runs)
if (runs !== undefined && !(Number.isSafeInteger(runs) && runs > 0)) throw new Error(`--runs must be a positive integer (got ${values.runs})`)
const mode = values.smoke ? 'smoke' : 'full'

const profiles = fileURLToPath(new URL('../results/profiles', import.meta.url))
const nodeFlags = values.profile ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : []
const report = await runBench({ mode, only: list(values.only), subjects: subjects as SubjectId[] | undefined, runs, nodeFlags })
const budgets = budgetChecks(report)
const out = values.out ?? fileURLToPath(new URL(`../results/${mode === 'full' ? 'latest' : 'smoke'}.json`, import.meta.url))
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, `${JSON.stringify({ ...report, budgets }, null, 2)}\n`)
process.stdout.write(`${markdown(report)}\n`)
process.stderr.write(`raw figures: ${out}\n`)
if (values.profile) process.stderr.write(`CPU profiles: ${profiles} (summarize one: node --import tsx bench/src/profile-summary.ts <file>)\n`)
if (values.strict && budgets.some((check) => !check.ok)) process.exitCode = 1
