/**
 * One worker process of the example (R-PG-4): serves queued prompts for many
 * sessions from the database, one at a time, each in the session's own agent
 * (the dsh spine with dsh-session-postgres as its persistence), and reports
 * what it does as JSON lines on stdout.
 *
 *   DSH_PG_URL=postgres://… node --conditions=dsh-source --import tsx worker.ts <schema> <name> [--rerun-interrupted]
 *
 * The connection string comes from the environment, never the command line (it may hold a password).
 *
 * A prompt whose worker died mid-turn is settled by the next worker that
 * claims it: resuming the session takes its lease over once it expired, and
 * crash repair closes the interrupted turn (unfinished tool calls get an
 * INTERRUPTED result, the turn ends `interrupted`). The prompt is then
 * reported `interrupted` with the repairs, and run again only with
 * `--rerun-interrupted` (tools may have side effects: re-running one is a
 * policy decision, never the default).
 *
 * The model is dsh's offline scripted model: for each prompt it calls the
 * `work` tool once, then answers. A prompt containing "hang" makes the tool
 * wait forever (the tests kill the worker there).
 */
import { Context } from 'cordis'
import { z } from 'zod'
import '@deepseek-ai/dsh-agent'
import AgentSpine from '@deepseek-ai/dsh-agent-spine'
import { ScriptedModel } from '@deepseek-ai/dsh-llm-scripted'
import { SessionId } from '@deepseek-ai/dsh-session'
import { defineTool } from '@deepseek-ai/dsh-tools'
import PostgresSessionPersistence from '../../src/index.ts'
import { CLAIM_TTL_MS, PromptQueue, type Job } from './queue.ts'

const url = process.env.DSH_PG_URL!
const [schema, name, ...flags] = process.argv.slice(2) as [string, string, ...string[]]
const rerunInterrupted = flags.includes('--rerun-interrupted')
const report = (event: object) => process.stdout.write(JSON.stringify({ worker: name, ...event }) + '\n')

const app = new Context()
const spine = app.plugin(AgentSpine, { defaultModel: { provider: 'scripted', model: 'worker' }, durability: 'step' })
await spine
const persistence = app.plugin(PostgresSessionPersistence, { url, schema, holder: name })
await persistence
const backend = app.sessionPersistence as PostgresSessionPersistence

let currentJob: Job | undefined
app.llm.registerAdapter(
  ['scripted'],
  new ScriptedModel({
    respond: (request) => {
      const last = request.messages[request.messages.length - 1]
      const answered = last?.role === 'user' && last.content.some((block) => block.type === 'tool-result')
      const prompt = currentJob?.prompt ?? ''
      return answered ? { text: `Done: ${prompt}` } : { toolCalls: [{ name: 'work', arguments: { task: prompt } }] }
    },
  }),
)
app.tools.register(
  defineTool({
    name: 'work',
    description: 'Does the work a prompt asks for.',
    parameters: z.object({ task: z.string() }),
    execute: async ({ task }) => {
      if (task.includes('hang')) {
        report({ event: 'in-tool', job: currentJob?.id })
        await new Promise(() => {})
      }
      return `worked on ${task}`
    },
  }),
)

const queue = new PromptQueue(url, schema)
await queue.migrate()
let stopping = false
process.on('SIGTERM', () => (stopping = true))
report({ event: 'ready' })

while (!stopping) {
  const job = await queue.claim(name)
  if (job === null) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    continue
  }
  currentJob = job
  const renewal = setInterval(() => void queue.renew(job.id, name).catch(() => {}), CLAIM_TTL_MS / 4)
  try {
    await serve(job)
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'SESSION_LOCKED') {
      // Another process still holds the session (a dead worker's lease has not expired yet): later.
      await queue.putBack(job, name)
      await new Promise((resolve) => setTimeout(resolve, 100))
    } else {
      await queue.finish(job.id, name, 'failed', `${code ?? 'ERROR'}: ${(error as Error).message}`)
      report({ event: 'failed', job: job.id, code })
    }
  } finally {
    clearInterval(renewal)
    currentJob = undefined
  }
}
await queue.close()
await persistence.dispose()
await spine.dispose()
process.exit(0)

/** Serves one job: settles an orphan, or runs a prompt in its session's agent. */
async function serve(job: Job): Promise<void> {
  const id = SessionId(job.sessionId)
  const stored = await backend.exists(id)
  const handle = stored ? await app.agents.resume({ resumeSessionId: id }) : await app.agents.create({ sessionId: id })
  try {
    const repairs = handle.loadReport?.repairs ?? []
    if (job.orphan) {
      // The worker that served this prompt died mid-turn: repair closed its turn. Report it.
      const outcome = `interrupted: its worker died mid-turn; repair appended ${repairs.map((repair) => repair.type).join(', ') || 'nothing'}`
      report({ event: 'interrupted', job: job.id, session: job.sessionId, repairs: repairs.length })
      if (rerunInterrupted) {
        await queue.finish(job.id, name, 'interrupted', outcome)
        await queue.enqueue(job.sessionId, job.prompt)
      } else {
        await queue.finish(job.id, name, 'interrupted', outcome)
      }
      return
    }
    report({ event: 'claimed', job: job.id, session: job.sessionId })
    handle.agent.followup(job.prompt)
    await handle.agent.whenIdle()
    await app.sessions.flush(handle.agent.session)
    await queue.finish(job.id, name, 'done', `turn ${handle.agent.session.position.lastTurn} completed`)
    report({ event: 'done', job: job.id, session: job.sessionId })
  } finally {
    await handle.dispose()
  }
}
