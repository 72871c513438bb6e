/**
 * One run of one scenario for one subject, in its own process:
 *
 *   node --conditions=dsh-source --import tsx --expose-gc child.ts <scenario> <subject> <params-json>
 *
 * The orchestrator starts it; it prints one `RESULT_PREFIX` line with the
 * metrics as JSON on stdout, or one `SKIPPED_PREFIX` line with the reason
 * when the scenario throws `ScenarioSkipped` (anything else goes to stderr).
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { RESULT_PREFIX, SKIPPED_PREFIX, assertSourceResolution } from './lib/child-process.ts'
import { ScenarioSkipped, type Scenario, type SubjectId } from './lib/scenario.ts'

const [id, subject, paramsJson] = process.argv.slice(2)
if (!id || !subject || !paramsJson) throw new Error('usage: child.ts <scenario> <subject> <params-json>')
assertSourceResolution()
// Only this run's scenario module is loaded (each is `scenarios/<id>.ts`), never the index: a peer's
// process must not load dsh's packages, whose module-load work would run in it (tests/peer-isolation).
const url = new URL(`./scenarios/${id}.ts`, import.meta.url)
if (!/^[a-z][a-z-]*$/.test(id) || !existsSync(fileURLToPath(url))) throw new Error(`unknown scenario "${id}"`)
const scenario = ((await import(url.href)) as { default: Scenario<any> }).default
if (scenario.id !== id) throw new Error(`scenarios/${id}.ts defines scenario "${scenario.id}"`)
try {
  const metrics = await scenario.run(subject as SubjectId, JSON.parse(paramsJson))
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(metrics)}\n`)
} catch (error) {
  if (!(error instanceof ScenarioSkipped)) throw error
  process.stdout.write(`${SKIPPED_PREFIX}${JSON.stringify(error.reason)}\n`)
}
// Timers of a disposed library (a keep-alive, a retry) must not hold the run open.
process.exit(0)
