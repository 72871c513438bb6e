/**
 * Scenario 6, resume (spec §13, R-PERF-2: a 1,000,000-event session resumes
 * in ≤ 3 s and ≤ 300 MB peak RSS). The run writes a session of `events`
 * events through the real loop with JSONL persistence (turns of a step with 4
 * no-op tool calls and a step answering `answerDeltas` text deltas), then
 * resumes it with `ctx.agents.resume` in a fresh child process
 * (`resume-load.ts`), so that the peak RSS is the load's own, and runs one
 * more turn there.
 */
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runChild } from '../lib/child-process.ts'
import { defineScenario, type Metrics } from '../lib/scenario.ts'
import { withTempDir } from '../lib/temp-dir.ts'
import { NOOP_TOOL, prompt } from '../subjects/workload.ts'

export interface ResumeParams {
  events: number
  answerDeltas: number
}

export const SESSION_ID = 'bench-resume'

async function write(directory: string, params: ResumeParams): Promise<Metrics> {
  const dsh = await import('../subjects/dsh.ts')
  const spine = await dsh.spine({
    respond: dsh.resumeResponder(NOOP_TOOL, 4, params.answerDeltas),
    tools: [dsh.noopTool],
    jsonlDirectory: directory,
  })
  const t0 = performance.now()
  const handle = await spine.create(SESSION_ID)
  let turns = 0
  while (handle.agent.session.events.length < params.events) await dsh.turn(handle.agent, prompt(turns++))
  const events = handle.agent.session.events.length
  await spine.dispose()
  const writeMs = performance.now() - t0
  const bytes = statSync(join(directory, `${SESSION_ID}.jsonl`)).size
  return { events, turns, writeMs, writeEventsPerSecond: events / (writeMs / 1000), fileMb: bytes / 1e6 }
}

export default defineScenario<ResumeParams>({
  id: 'resume',
  title: '6. Resume',
  describe: (p) =>
    `write a ${p.events.toLocaleString('en-US')}-event JSONL session through the loop, then ctx.agents.resume it in a fresh process and run one more turn`,
  subjects: ['dsh'],
  metrics: [
    { key: 'events', label: 'events in the session', unit: '', digits: 0, compare: false },
    { key: 'fileMb', label: 'file size', unit: 'MB', digits: 1, compare: false },
    { key: 'writeEventsPerSecond', label: 'write through the loop', unit: 'events/s', digits: 0, compare: false },
    { key: 'loadMs', label: 'resume (load + prepare + publish)', unit: 'ms', digits: 0, compare: false, budget: { op: '<=', limit: 3000, source: '§13' } },
    { key: 'peakRssMb', label: 'peak RSS of the resuming process', unit: 'MB', digits: 0, compare: false, budget: { op: '<=', limit: 300, source: '§13' } },
    { key: 'baselineRssMb', label: 'RSS before resuming (Node, tsx, modules)', unit: 'MB', digits: 0, compare: false },
    { key: 'resumeRssMb', label: 'peak RSS added by the resume', unit: 'MB', digits: 0, compare: false },
    { key: 'firstTurnMs', label: 'first turn after resume', unit: 'ms', digits: 1, compare: false },
  ],
  params: (mode) => (mode === 'full' ? { events: 1_000_000, answerDeltas: 100 } : { events: 3_000, answerDeltas: 100 }),
  runs: (mode) => (mode === 'full' ? 3 : 1),
  async run(_subject, params) {
    return withTempDir('resume', async (directory) => {
      const written = await write(directory, params)
      const loader = fileURLToPath(new URL('./resume-load.ts', import.meta.url))
      // `pnpm bench --profile` profiles the load process too.
      const profiling = process.execArgv.filter((flag) => flag.startsWith('--cpu-prof'))
      const { result } = await runChild(loader, [directory, JSON.stringify(params)], profiling)
      const loaded = result as Metrics
      if (loaded.events !== written.events) throw new Error(`resumed ${loaded.events} events, wrote ${written.events}`)
      return { ...written, ...loaded }
    })
  },
})
