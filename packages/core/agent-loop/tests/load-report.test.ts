import { Context, Logger } from 'cordis'
import { describe, expect, it } from 'vitest'
import Agents, { type AgentLoadReport } from '@deepseek-ai/dsh-agent'
import AgentLoop from '@deepseek-ai/dsh-agent-loop'
import Llm from '@deepseek-ai/dsh-llm'
import { ScriptedModel } from '@deepseek-ai/dsh-llm-scripted'
import Sessions, { SessionId, memoryPersistence, MemorySessionPersistence, type LoadedSession } from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import Tools from '@deepseek-ai/dsh-tools'
import { spine, trace } from '@deepseek-ai/dsh-testkit'

const id = SessionId('a')
const opts = { provider: 'scripted', model: 'test-model' }

/** What a file backend reports for a torn tail it cut (the shape dsh-session's `SessionLoadWarning` defines). */
const tornTail: LoadedSession['warnings'] = [
  {
    code: 'TORN_TAIL',
    message: 'Cut 17 bytes after the last newline of /data/a.jsonl (line 9): a write that never finished. They were copied to /data/a.jsonl.torn-1.',
    file: '/data/a.jsonl',
    line: 9,
    sidecar: '/data/a.jsonl.torn-1',
  },
]

/**
 * A persisted session `a` whose process died mid-step: turn 1's model call
 * had started (the step is open) when the log was last flushed. Loading it
 * repairs the crash: `step/end`, then `turn/end{interrupted}`.
 */
async function crashedMidStep(): Promise<MemorySessionPersistence> {
  const backend = new MemorySessionPersistence()
  const first = await spine({ model: { script: ['never delivered'] } })
  await first.root.plugin(memoryPersistence, { backend })
  const { agent } = await first.root.agents.create({ sessionId: id, agentOptions: opts })
  const call = first.model.control()
  agent.followup('question')
  await call.started
  await first.root.sessions.flush(agent.session)
  // The process dies here: nothing of the first app is disposed, the backend keeps what was flushed.
  return backend
}

/** A backend over `backend`'s records whose loads also report `warnings`, as a file backend would. */
function reporting(backend: MemorySessionPersistence, warnings: LoadedSession['warnings']): MemorySessionPersistence {
  const reopened = backend.reopen()
  const load = reopened.load.bind(reopened)
  reopened.load = async (sessionId) => ({ ...(await load(sessionId)), warnings })
  return reopened
}

/** The lifecycle notifications in order, load reports in full. */
function lifecycleLog(root: Context) {
  const log: unknown[] = []
  root.on('session/created', (s) => void log.push(`session/created ${s.id}`))
  root.on('agent/created', (a) => void log.push(`agent/created ${a.id}`))
  root.on('agent/load-report', (a, report) => void log.push([`agent/load-report ${a.id}`, report]))
  root.on('agent/session-start', (a, source) => void log.push(`agent/session-start ${a.id} ${source}`))
  return log
}

const repairs = [
  { seq: expect.any(Number), type: 'step/end' as const, detail: 'closed step 1 of turn 1, which the crash left open' },
  { seq: expect.any(Number), type: 'turn/end' as const, detail: 'closed turn 1 as interrupted' },
]

describe('load reports reach the owner of a resumed agent (issue 14.3)', () => {
  it('a resume whose load repaired a crash and warned: handle.loadReport, and agent/load-report between agent/created and agent/session-start', async () => {
    const backend = await crashedMidStep()
    const second = await spine({ model: { script: ['answer'] } })
    await second.root.plugin(memoryPersistence, { backend: reporting(backend, tornTail) })
    const log = lifecycleLog(second.root)
    const handle = await second.root.agents.resume({ resumeSessionId: id, agentOptions: opts })
    const report: AgentLoadReport = { repairs, warnings: tornTail }
    expect(handle.loadReport).toEqual(report)
    expect(log).toEqual(['session/created a', 'agent/created a', ['agent/load-report a', report], 'agent/session-start a resume'])
    // The repairs are the log's own events.
    const seqs = handle.loadReport!.repairs.map((repair) => repair.seq)
    expect(seqs.map((seq) => handle.agent.session.events[seq]!.type)).toEqual(['step/end', 'turn/end'])
    expect(trace(handle.agent.session).slice(-2)).toEqual(['step/end 1.1', 'turn/end 1 interrupted'])
    // Frozen: the owner reads it, nobody changes it under the next reader.
    expect([Object.isFrozen(handle.loadReport), Object.isFrozen(handle.loadReport!.repairs), Object.isFrozen(handle.loadReport!.warnings[0])]).toEqual([true, true, true])
  })

  it('repairs alone, and warnings alone, are each reported', async () => {
    const backend = await crashedMidStep()
    const repaired = await spine()
    await repaired.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const repairedLog = lifecycleLog(repaired.root)
    const first = await repaired.root.agents.resume({ resumeSessionId: id, agentOptions: opts })
    expect(first.loadReport).toEqual({ repairs, warnings: [] })
    expect(repairedLog[2]).toEqual(['agent/load-report a', { repairs, warnings: [] }])
    await repaired.root.sessions.flush(first.agent.session)

    // The repairs are durable: the next load has none to make, only the warning to report.
    const warned = await spine()
    await warned.root.plugin(memoryPersistence, { backend: reporting(backend, tornTail) })
    const warnedLog = lifecycleLog(warned.root)
    const second = await warned.root.agents.resume({ resumeSessionId: id, agentOptions: opts })
    expect(second.loadReport).toEqual({ repairs: [], warnings: tornTail })
    expect(warnedLog).toEqual(['session/created a', 'agent/created a', ['agent/load-report a', { repairs: [], warnings: tornTail }], 'agent/session-start a resume'])
  })

  it('a clean load: loadReport is set and empty, and no agent/load-report is emitted; a created agent has no loadReport', async () => {
    const backend = new MemorySessionPersistence()
    const { root } = await spine()
    await root.plugin(memoryPersistence, { backend })
    const created = await root.agents.create({ sessionId: id, agentOptions: opts })
    expect('loadReport' in created).toBe(false)
    await created.dispose()
    const log = lifecycleLog(root)
    const resumed = await root.agents.resume({ resumeSessionId: id, agentOptions: opts })
    expect(resumed.loadReport).toEqual({ repairs: [], warnings: [] })
    expect(log).toEqual(['session/created a', 'agent/created a', 'agent/session-start a resume'])
  })

  it("a config agent's owner learns the report from agent/load-report (config agents have no handle)", async () => {
    const backend = await crashedMidStep()
    const root = new Context()
    for (const plugin of [Llm, Sessions, Tools, Agents]) await root.plugin(plugin)
    await root.plugin(SystemPrompt, { identity: 'You are a test agent.', persona: '' })
    await root.plugin(memoryPersistence, { backend: reporting(backend, tornTail) })
    root.llm.registerAdapter(['scripted'], new ScriptedModel({}))
    const log = lifecycleLog(root)
    const started = new Promise<void>((resolve) => root.on('agent/session-start', () => resolve()))
    await root.plugin(AgentLoop, { agents: [{ id: 'assistant', resumeSessionId: 'a', provider: 'scripted', model: 'test-model' }] })
    await started
    expect(log).toEqual(['session/created a', 'agent/created a', ['agent/load-report a', { repairs, warnings: tornTail }], 'agent/session-start a resume'])
  })

  it('a scoped listener registered in setup receives its own agent\'s report', async () => {
    const backend = await crashedMidStep()
    const { root } = await spine()
    await root.plugin(memoryPersistence, { backend: reporting(backend, tornTail) })
    const seen: unknown[] = []
    await root.agents.resume({
      resumeSessionId: id,
      agentOptions: opts,
      setup: (ctx) => void ctx.on('agent/load-report', (agent, report) => void seen.push([agent.id, report.warnings.map((w) => w.code)])),
    })
    expect(seen).toEqual([['a', ['TORN_TAIL']]])
  })
})

/** The warnings the app's logger prints from now on, one string each. */
function warningsOf(root: Context): string[] {
  const lines: string[] = []
  root.logger.exporter({ colors: false, levels: { default: 2 }, export: (message) => void lines.push(Logger.format({ colors: false, export() {} }, message)) })
  return lines
}

describe('a resume rolled back after its load still reports what the load cut and repaired', () => {
  it('a setup that fails after the load: the resume rejects with its error, and the torn tail and the repairs are logged as one warning', async () => {
    const backend = await crashedMidStep()
    const { root } = await spine()
    await root.plugin(memoryPersistence, { backend: reporting(backend, tornTail) })
    const lines = warningsOf(root)
    const failure = await root.agents.resume({ resumeSessionId: id, agentOptions: opts, setup: () => Promise.reject(new Error('setup broke')) }).catch((error: unknown) => error)
    expect(failure).toMatchObject({ message: 'setup broke' })
    expect(lines).toEqual([
      [
        'the resume of session a was rolled back (setup broke); what its load reported stays in the stored session:',
        `  TORN_TAIL: ${tornTail[0]!.message}`,
        '  repaired at seq 7 (step/end): closed step 1 of turn 1, which the crash left open',
        '  repaired at seq 8 (turn/end): closed turn 1 as interrupted',
      ].join('\n'),
    ])
  })

  it('a resume that succeeds logs nothing of its report (its owner reads handle.loadReport and agent/load-report)', async () => {
    const backend = await crashedMidStep()
    const { root } = await spine()
    await root.plugin(memoryPersistence, { backend: reporting(backend, tornTail) })
    const lines = warningsOf(root)
    const handle = await root.agents.resume({ resumeSessionId: id, agentOptions: opts })
    expect(handle.loadReport?.warnings).toEqual(tornTail)
    expect(lines).toEqual([])
  })
})
