/**
 * Scenario 7, prefix stability (spec §13: across ordinary steps each
 * request's bytes extend the previous request's bytes exactly, also after a
 * resume). A session of `steps` steps in turns of `stepsPerTurn` steps (tool
 * steps with reasoning and 2 no-op calls, then a text answer) runs with JSONL
 * persistence; after `resumeAtStep` steps the whole spine is disposed and a
 * new one resumes the session from its file, as after a restart. Every
 * request the model receives is serialized (system, tools, then each message
 * as JSON); the figure is the share of requests whose bytes start with the
 * previous request's bytes, which must be 100%.
 */
import type { LlmRequest } from '@deepseek-ai/dsh-llm'
import type { ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import { defineScenario, type Metrics } from '../lib/scenario.ts'
import { withTempDir } from '../lib/temp-dir.ts'
import { ANSWER_DELTAS, NOOP_TOOL, prompt } from '../subjects/workload.ts'

interface Params {
  steps: number
  stepsPerTurn: number
  resumeAtStep: number
}

const SESSION_ID = 'bench-prefix'

/** The bytes a provider adapter would be handed: the prefix (system and tools) then each message. */
export function requestBytes(request: LlmRequest): string {
  let bytes = JSON.stringify({ system: request.system ?? '', tools: request.tools ?? [] })
  for (const message of request.messages) bytes += `\n${JSON.stringify(message)}`
  return bytes
}

/** How many model calls of the current turn came before this one (assistant messages since the prompt). */
function stepsSoFar(request: LlmRequest): number {
  let steps = 0
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i]!
    if (message.role === 'assistant') steps++
    else if (!message.content.some((block) => block.type === 'tool-result')) break
  }
  return steps
}

async function prefixStability(params: Params): Promise<Metrics> {
  const dsh = await import('../subjects/dsh.ts')
  const answer: ScriptReply = { reasoning: 'The results are in; time to answer.', text: ANSWER_DELTAS }
  const log: string[] = []
  let resumedAt = -1
  const respond = (request: LlmRequest): ScriptReply => {
    log.push(requestBytes(request))
    const step = stepsSoFar(request)
    if (step + 1 >= params.stepsPerTurn) return answer
    return {
      reasoning: `Step ${step + 1}: look at two more items.`,
      toolCalls: [
        { name: NOOP_TOOL, arguments: { n: 2 * step } },
        { name: NOOP_TOOL, arguments: { n: 2 * step + 1 } },
      ],
    }
  }
  return withTempDir('prefix', async (directory) => {
    const options = { respond, tools: [dsh.noopTool], jsonlDirectory: directory }
    let spine = await dsh.spine(options)
    let handle = await spine.create(SESSION_ID)
    for (let turn = 0; log.length < params.steps; turn++) {
      if (resumedAt < 0 && log.length >= params.resumeAtStep) {
        await spine.dispose()
        spine = await dsh.spine(options)
        handle = await spine.resume(SESSION_ID)
        resumedAt = log.length
      }
      await dsh.turn(handle.agent, prompt(turn))
    }
    await spine.dispose()
    let extended = 0
    for (let i = 1; i < log.length; i++) if (log[i]!.startsWith(log[i - 1]!)) extended++
    const pairs = log.length - 1
    return {
      requests: log.length,
      extended,
      share: pairs > 0 ? (100 * extended) / pairs : 100,
      resumeExtends: resumedAt > 0 && log[resumedAt]!.startsWith(log[resumedAt - 1]!) ? 1 : 0,
      lastRequestKb: log[log.length - 1]!.length / 1000,
    }
  })
}

export default defineScenario<Params>({
  id: 'prefix-stability',
  title: '7. Prefix stability',
  describe: (p) =>
    `${p.steps} steps in turns of ${p.stepsPerTurn} (tool steps with reasoning, then an answer), JSONL persistence, the spine restarted and the session resumed after step ${p.resumeAtStep}`,
  subjects: ['dsh'],
  metrics: [
    { key: 'requests', label: 'requests', unit: '', digits: 0, compare: false },
    { key: 'share', label: 'requests extending the previous one', unit: '%', digits: 1, compare: false, budget: { op: '>=', limit: 100, source: '§13' } },
    { key: 'resumeExtends', label: 'first request after resume extends the last one before (1 = yes)', unit: '', digits: 0, compare: false, budget: { op: '>=', limit: 1, source: '§13' } },
    { key: 'lastRequestKb', label: 'size of the last request', unit: 'kB', digits: 1, compare: false },
  ],
  params: (mode) => (mode === 'full' ? { steps: 200, stepsPerTurn: 5, resumeAtStep: 100 } : { steps: 20, stepsPerTurn: 5, resumeAtStep: 10 }),
  // Deterministic: one run says all.
  runs: () => 1,
  run: (_subject, params) => prefixStability(params),
})
