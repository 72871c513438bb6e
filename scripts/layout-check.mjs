#!/usr/bin/env node
// The repository's layout checks, run by CI (.ci/run) and by hand:
//
//   node scripts/layout-check.mjs [--root <dir>]
//
// - loop dependents: only the spine bundle, the demo and the test kit depend on dsh-agent-loop;
// - import circles: none among the package sources (type-only imports count);
// - file size: no package source file over 450 lines;
// - package skeleton: Cordis is imported only in src/cordis.ts, src/index.ts only re-exports.
//
// (That no file imports another package's tests/ folder is checked by scripts/package-imports.mjs.)
//
// Exits 1 and lists `file:line` for each problem. A few known problems of this repository whose
// fix is under way (issue 16, in other engineers' hands) are listed in PENDING: they are printed
// but do not fail the run, and an entry that no longer matches a problem is reported, so that it
// is removed once its fix lands (it warns rather than fails while checkouts with and without the
// fix coexist). `--root <dir>` checks another tree, without PENDING.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MAX_SOURCE_LINES, oversizedSources } from './file-size.mjs'
import { describeCycle, findImportCycles } from './import-cycles.mjs'
import { loopDependencyProblems } from './loop-dependents.mjs'
import { skeletonProblems } from './package-skeleton.mjs'

/**
 * Problems being fixed right now, by check and key (the file a size problem
 * names, every file of a circle joined by ` ↔ `), each with who is fixing it.
 * Remove an entry when its fix lands (the check reports an entry that matches nothing).
 */
export const PENDING = Object.freeze([])

/** Every check's findings at `root`: `{ check, key, message }`, where `key` identifies the finding for PENDING. */
export function runChecks(root) {
  const out = []
  for (const message of loopDependencyProblems(root)) out.push({ check: 'loop dependents', key: message.split(':')[0], message })
  for (const cycle of findImportCycles(root)) {
    out.push({ check: 'import circles', key: cycle.files.join(' ↔ '), message: `${describeCycle(cycle)} (knot of ${cycle.files.length} files: ${cycle.files.join(', ')})` })
  }
  for (const { file, lines } of oversizedSources(root)) {
    out.push({ check: 'file size', key: file, message: `${file}: ${lines} lines (at most ${MAX_SOURCE_LINES}); split it by concept` })
  }
  for (const message of skeletonProblems(root)) out.push({ check: 'package skeleton', key: message.split(':')[0], message })
  return out
}

/**
 * The findings at `root` sorted against `pending`: `problems` fail the run,
 * `tolerated` are pending ones still present, `stale` are pending entries
 * that match nothing any more.
 */
export function layoutReport(root, pending = PENDING) {
  const findings = runChecks(root)
  const isPending = (finding) => pending.some((entry) => entry.check === finding.check && entry.key === finding.key)
  return {
    problems: findings.filter((finding) => !isPending(finding)),
    tolerated: findings.filter(isPending),
    stale: pending.filter((entry) => !findings.some((finding) => finding.check === entry.check && finding.key === entry.key)),
  }
}

function main(argv) {
  const rootFlag = argv.indexOf('--root')
  const root = rootFlag >= 0 ? argv[rootFlag + 1] : join(dirname(fileURLToPath(import.meta.url)), '..')
  // PENDING describes this repository; another root is checked without it.
  const { problems, tolerated, stale } = layoutReport(root, rootFlag >= 0 ? [] : PENDING)
  for (const finding of tolerated) {
    const entry = PENDING.find((e) => e.check === finding.check && e.key === finding.key)
    console.warn(`pending (${finding.check}): ${finding.message} [${entry.why}]`)
  }
  for (const entry of stale) {
    console.warn(`fixed (${entry.check}): ${entry.key}; remove its PENDING entry from scripts/layout-check.mjs`)
  }
  const failures = problems.map((finding) => `${finding.check}: ${finding.message}`)
  if (failures.length) {
    console.error(`layout check: ${failures.length} problem(s)`)
    for (const failure of failures) console.error(`  ${failure}`)
    console.error('See docs/contributing.md ("The package skeleton" and "Checks") for the rules.')
    process.exit(1)
  }
  console.log(`layout check: the loop's dependents, import circles, file sizes and package skeletons are in order${tolerated.length ? ` (${tolerated.length} pending)` : ''}.`)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2))
}
