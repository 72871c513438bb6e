/**
 * The load half of scenario 6, in its own process (so its peak RSS is the
 * load's alone): mounts the spine with JSONL persistence, resumes the
 * session through `ctx.agents.resume`, then runs one more turn.
 *
 *   node --conditions=dsh-source --import tsx --expose-gc resume-load.ts <directory> <params-json>
 */
import { RESULT_PREFIX, assertSourceResolution } from '../lib/child-process.ts'
import { NOOP_TOOL } from '../subjects/workload.ts'
import { SESSION_ID, type ResumeParams } from './resume.ts'

const [directory, paramsJson] = process.argv.slice(2)
if (!directory || !paramsJson) throw new Error('usage: resume-load.ts <directory> <params-json>')
assertSourceResolution()
const params = JSON.parse(paramsJson) as ResumeParams
const dsh = await import('../subjects/dsh.ts')
const spine = await dsh.spine({
  respond: dsh.resumeResponder(NOOP_TOOL, 4, params.answerDeltas),
  tools: [dsh.noopTool],
  jsonlDirectory: directory,
})
const baselineRssMb = process.memoryUsage().rss / 1048576
const t0 = performance.now()
const handle = await spine.resume(SESSION_ID)
const loadMs = performance.now() - t0
const peakRssMb = process.resourceUsage().maxRSS / 1024
const events = handle.agent.session.events.length
const t1 = performance.now()
await dsh.turn(handle.agent, 'One more question after the restart.')
const firstTurnMs = performance.now() - t1
await spine.dispose()
const resumeRssMb = peakRssMb - baselineRssMb
process.stdout.write(`${RESULT_PREFIX}${JSON.stringify({ events, loadMs, peakRssMb, baselineRssMb, resumeRssMb, firstTurnMs })}\n`)
process.exit(0)
