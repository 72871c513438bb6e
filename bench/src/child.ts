/**
 * One run of one scenario for one subject, in its own process:
 *
 *   node --conditions=dsh-source --import tsx --expose-gc child.ts <scenario> <subject> <params-json>
 *
 * The orchestrator starts it; it prints one `RESULT_PREFIX` line with the
 * metrics as JSON on stdout, or one `SKIPPED_PREFIX` line with the reason
 * when the scenario throws `ScenarioSkipped` (anything else goes to stderr).
 */
import { scenario } from './scenarios/index.ts'
import { RESULT_PREFIX, SKIPPED_PREFIX, assertSourceResolution } from './lib/child-process.ts'
import { ScenarioSkipped, type SubjectId } from './lib/scenario.ts'

const [id, subject, paramsJson] = process.argv.slice(2)
if (!id || !subject || !paramsJson) throw new Error('usage: child.ts <scenario> <subject> <params-json>')
assertSourceResolution()
try {
  const metrics = await scenario(id).run(subject as SubjectId, JSON.parse(paramsJson))
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(metrics)}\n`)
} catch (error) {
  if (!(error instanceof ScenarioSkipped)) throw error
  process.stdout.write(`${SKIPPED_PREFIX}${JSON.stringify(error.reason)}\n`)
}
// Timers of a disposed library (a keep-alive, a retry) must not hold the run open.
process.exit(0)
