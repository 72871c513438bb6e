/**
 * `pnpm bench` / `pnpm bench:smoke`: runs the scenarios, prints the markdown
 * (issue 18's done criterion, then the table) on stdout, progress on stderr,
 * and writes the raw figures as JSON.
 *
 *   pnpm bench [--smoke] [--only growth,resume] [--subjects dsh,pi-agent-core] [--runs 3]
 *              [--node <path | major>] [--stream-batch n] [--out file.json] [--strict] [--profile]
 *              [--node-flag <flag>]… [--child-timeout <minutes>]
 *
 * `--node` runs every scenario's processes under another Node binary: a path,
 * or a major (`22`, `24`) fetched once from the npm registry by
 * `scripts/node-binary.mjs`. `--stream-batch` sets how many deltas scenario 4
 * feeds per macrotask (default 64, see `lib/feed.ts`).
 *
 * `--profile` runs every child with `--cpu-prof` into `bench/results/profiles/`;
 * `src/profile-summary.ts` lists a profile's top self-time functions.
 * `--node-flag` (repeatable) passes a flag to every run's Node, e.g.
 * `--node-flag=--no-turbofan` to see what a round costs before V8's
 * optimizing compiler has run (the cold round is mostly that); the header
 * line names the flags, since such figures are not the standard ones.
 *
 * `--child-timeout` (default 60 minutes) bounds each run's child: one that
 * has not finished by then is killed and fails its run (a dsh run fails the
 * bench). `--out` is checked before anything runs.
 *
 * Exit code 0 even when a budget or the criterion is missed (the table says
 * so); 1 when a dsh run fails, or with `--strict` when a budget is missed.
 * A scenario that finds a precondition missing (no `DSH_PG_URL`, a server
 * that does not start) is skipped with its reason: one line on stderr, a
 * row in the table, and its budgets neither met nor missed.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { nodeBinary } from '../../scripts/node-binary.mjs'
import { budgetChecks, criterionChecks, markdown, missedBudgets } from './report.ts'
import { runBench } from './run-bench.ts'
import { SUBJECTS, type SubjectId } from './lib/scenario.ts'
import { outputFile, parseNodeOption, positiveInteger } from './lib/options.ts'

const { values } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    only: { type: 'string' },
    subjects: { type: 'string' },
    runs: { type: 'string' },
    node: { type: 'string' },
    'stream-batch': { type: 'string' },
    out: { type: 'string' },
    strict: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    'node-flag': { type: 'string', multiple: true },
    'child-timeout': { type: 'string' },
  },
})

const list = (value: string | undefined) => value?.split(',').map((s) => s.trim()).filter(Boolean)
const subjects = list(values.subjects)
for (const subject of subjects ?? []) {
  if (!SUBJECTS.includes(subject as SubjectId)) throw new Error(`unknown subject "${subject}"; known: ${SUBJECTS.join(', ')}`)
}
const runs = values.runs === undefined ? undefined : positiveInteger('--runs', values.runs)
const streamBatch = values['stream-batch'] === undefined ? undefined : positiveInteger('--stream-batch', values['stream-batch'])
const childTimeout = values['child-timeout'] === undefined ? undefined : positiveInteger('--child-timeout', values['child-timeout'])
// A Node timer holds at most 2^31 − 1 ms; a longer one fires after 1 ms (every run killed at once).
const LONGEST_CHILD_TIMEOUT = Math.floor((2 ** 31 - 1) / 60_000)
if (childTimeout !== undefined && childTimeout > LONGEST_CHILD_TIMEOUT) {
  throw new Error(`--child-timeout must be at most ${LONGEST_CHILD_TIMEOUT} minutes, the longest a Node timer holds (got ${childTimeout})`)
}
const mode = values.smoke ? 'smoke' : 'full'
// A path that cannot be written fails now, not after the runs.
const outOption = values.out === undefined ? undefined : outputFile(values.out)

const nodeOption = values.node === undefined ? undefined : parseNodeOption(values.node)
let node: string | undefined
if (nodeOption?.kind === 'major') {
  node = (await nodeBinary(nodeOption.major)).path
  process.stderr.write(`--node ${nodeOption.major}: ${node}\n`)
} else if (nodeOption?.kind === 'path') {
  node = nodeOption.path
}

const profiles = fileURLToPath(new URL('../results/profiles', import.meta.url))
const extraFlags = values['node-flag'] ?? []
for (const flag of extraFlags) if (!flag.startsWith('--')) throw new Error(`--node-flag takes a Node flag starting with "--", e.g. --node-flag=--no-turbofan; got "${flag}"`)
const nodeFlags = [...(values.profile ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : []), ...extraFlags]
const report = await runBench({
  mode,
  only: list(values.only),
  subjects: subjects as SubjectId[] | undefined,
  runs,
  nodeFlags,
  node,
  params: streamBatch === undefined ? undefined : { streaming: { batch: streamBatch } },
  childTimeoutMs: childTimeout === undefined ? undefined : childTimeout * 60_000,
})
const budgets = budgetChecks(report)
const criterion = criterionChecks(report)
// Runs under another Node keep their own file, so that `latest.json` stays the default binary's.
const major = node === undefined ? '' : `-node${report.machine.node.replace(/^v/, '').split('.')[0]}`
const out = outOption ?? fileURLToPath(new URL(`../results/${mode === 'full' ? 'latest' : 'smoke'}${major}.json`, import.meta.url))
// The table first: should the file still fail (a full disk), the figures are on the screen.
process.stdout.write(`${markdown(report)}\n`)
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, `${JSON.stringify({ ...report, criterion, budgets }, null, 2)}\n`)
for (const check of criterion) {
  const ratio = check.ratio === undefined ? 'no figure' : `${check.ratio.toFixed(2)}×`
  process.stderr.write(`criterion ${check.title}: pi / dsh ${ratio} (${check.aimMet ? 'aim met' : check.pass ? 'pass' : 'miss'})\n`)
}
process.stderr.write(`raw figures: ${out}\n`)
if (values.profile) process.stderr.write(`CPU profiles: ${profiles} (summarize one: node --import tsx bench/src/profile-summary.ts <file>)\n`)
if (values.strict && missedBudgets(budgets).length > 0) process.exitCode = 1
