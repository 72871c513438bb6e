/**
 * Resume budget of the JSONL backend (spec §13, R-PERF-2): write a session of
 * N events (default 1,000,000, mostly `assistant/chunk` inside steps) through
 * a live `ctx.sessions` session with the backend wired, flushing (fsync) at
 * every turn end as the loop's checkpoint does; then, each in a fresh
 * process, load it back, and load + `ctx.sessions.prepare` it (a whole
 * resume), reporting time and peak RSS. The write is also run without
 * persistence, to show what the backend adds, and with a flush per step (the
 * loop's `durability: 'step'`); short tool steps with one flush each, and
 * flushes with nothing pending, show what the per-step checkpoint costs.
 *
 *   npx tsx packages/session/session-jsonl/bench/resume.ts [events] [--keep <dir>]
 *
 * The phases (`resume-phases.ts`) are bundled with tsup and run by plain
 * `node`, each in its own process, so the figures are those of built code
 * (no TypeScript loader in memory) and the load's peak RSS
 * (`process.resourceUsage().maxRSS`) is the load's alone.
 * Budget: load ≤ 3 s and ≤ 300 MB peak RSS, with no whole-file string.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'tsup'
import type { PhaseReport } from './resume-phases.ts'

const repoRoot = fileURLToPath(new URL('../../../..', import.meta.url))

async function bundlePhases(outDir: string): Promise<string> {
  await build({
    entry: { phases: fileURLToPath(new URL('./resume-phases.ts', import.meta.url)) },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    noExternal: [/.*/],
    splitting: false,
    sourcemap: false,
    dts: false,
    silent: true,
    config: false,
    outExtension: () => ({ js: '.mjs' }),
    esbuildOptions(options) {
      // Resolve the workspace packages to their sources, as the tests do.
      options.conditions = ['dsh-source']
    },
  })
  return join(outDir, 'phases.mjs')
}

async function main() {
  const args = process.argv.slice(2)
  const keepIndex = args.indexOf('--keep')
  const keep = keepIndex >= 0 ? args.splice(keepIndex, 2)[1] : undefined
  const total = Number(args[0] ?? 1_000_000)
  const work = mkdtempSync(join(tmpdir(), 'dsh-jsonl-bench-'))
  const bundleOnly = args[0] === '--bundle'
  if (bundleOnly) {
    // Leaves the phases bundle in place and prints its path (for profiling a phase by hand).
    console.log(await bundlePhases(join(work, 'bundle')))
    return
  }
  const directory = keep ?? join(work, 'sessions')
  try {
    const phases = await bundlePhases(join(work, 'bundle'))
    const run = (...phaseArgs: string[]) =>
      JSON.parse(execFileSync(process.execPath, [phases, ...phaseArgs], { cwd: repoRoot, encoding: 'utf8' })) as PhaseReport
    const write = run('write', directory, String(total))
    const perStep = run('write-step', join(work, 'per-step'), String(total))
    const memory = run('write-memory', '-', String(total))
    const steps = run('step-flush', join(work, 'steps'), '2000')
    const stepsMemory = run('step-flush', '-', '2000')
    const noop = run('flush-noop', join(work, 'noop'), '100000')
    const noopMemory = run('flush-noop', '-', '100000')
    const load = run('load', directory)
    const resume = run('resume', directory)
    const streamed = run('stream', join(work, 'stream'), String(total))
    const streamedMemory = run('stream', '-', String(total))
    const perSecond = (events: number, ms: number) => Math.round(events / (ms / 1000)).toLocaleString('en-US')
    const times = (report: PhaseReport) => `${report.ms.toFixed(0)} ms wall, ${report.cpuMs.toFixed(0)} ms CPU`
    console.log(`dsh-session-jsonl resume bench: ${write.events.toLocaleString('en-US')} events, node ${process.version}, ${process.platform}, load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`)
    console.log(
      `write:  ${times(write)}, ${perSecond(write.events, write.ms)} events/s through ctx.sessions + JSONL, ` +
        `${write.flushes} flushes (fsync each), ${((write.bytes ?? 0) / 1e6).toFixed(1)} MB file, peak RSS ${write.maxRssMb.toFixed(0)} MB`,
    )
    console.log(
      `        flush per step too: ${times(perStep)}, ${perSecond(perStep.events, perStep.ms)} events/s, ${perStep.flushes} flushes ` +
        `(${(perStep.ms / write.ms).toFixed(2)}× the wall time, ${(perStep.cpuMs / write.cpuMs).toFixed(2)}× the CPU of a flush per turn)`,
    )
    console.log(`        without persistence: ${times(memory)}, ${perSecond(memory.events, memory.ms)} events/s`)
    const each = (report: PhaseReport, field: 'ms' | 'cpuMs') => (report[field] * 1000) / report.flushes!
    console.log(
      `steps:  ${steps.flushes} short tool steps, one flush each (1 write + 1 fsync): ${each(steps, 'ms').toFixed(0)} µs wall, ` +
        `${each(steps, 'cpuMs').toFixed(0)} µs CPU per step; without persistence ${each(stepsMemory, 'ms').toFixed(0)} µs wall, ${each(stepsMemory, 'cpuMs').toFixed(0)} µs CPU per step`,
    )
    console.log(
      `noop:   ctx.sessions.flush with nothing pending: ${each(noop, 'ms').toFixed(2)} µs wall, ${each(noop, 'cpuMs').toFixed(2)} µs CPU per call ` +
        `(${((each(noop, 'ms') / each(steps, 'ms')) * 100).toFixed(2)}% of a flush with a step pending); ` +
        `without persistence ${each(noopMemory, 'ms').toFixed(2)} µs wall, ${each(noopMemory, 'cpuMs').toFixed(2)} µs CPU`,
    )
    console.log(
      `stream: ${perSecond(streamed.events, streamed.ms)} chunks/s into one step through ctx.sessions + JSONL (${times(streamed)}, one flush at the end); ` +
        `without persistence ${perSecond(streamedMemory.events, streamedMemory.ms)} chunks/s (${times(streamedMemory)})`,
    )
    console.log(
      `load:   ${times(load)}, ${perSecond(load.events, load.ms)} events/s, peak RSS ${load.maxRssMb.toFixed(0)} MB ` +
        `(${load.baselineRssMb!.toFixed(0)} MB before), ${load.warnings} warnings, ${load.repairs} repairs`,
    )
    console.log(
      `resume: ${times(resume)} (load ${resume.loadMs!.toFixed(0)} ms + ctx.sessions.prepare ${(resume.ms - resume.loadMs!).toFixed(0)} ms wall), ` +
        `peak RSS ${resume.maxRssMb.toFixed(0)} MB; budget 3000 ms, 300 MB`,
    )
    if (perStep.events !== write.events) throw new Error(`the per-step write made ${perStep.events} events, the per-turn one ${write.events}`)
    if (load.events !== write.events || resume.events !== write.events) throw new Error(`loaded ${load.events} / resumed ${resume.events} events, wrote ${write.events}`)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

await main()
