import { Logger } from 'cordis'
import { describe, expect, it } from 'vitest'
import { MemorySessionPersistence, SessionId, memoryPersistence, type LoadedSession } from '@deepseek-ai/dsh-session'
import { spine } from '@deepseek-ai/dsh-testkit'

const id = SessionId('a')
const opts = { provider: 'scripted', model: 'test-model' }

const tornTail: LoadedSession['warnings'] = [
  {
    code: 'TORN_TAIL',
    message: 'Cut 17 bytes after the last newline of /data/a.jsonl (line 9): a write that never finished. They were copied to /data/a.jsonl.torn-1.',
    file: '/data/a.jsonl',
    line: 9,
    sidecar: '/data/a.jsonl.torn-1',
  },
]

/** A session whose process died mid-step (its next load repairs it), reopened by a backend whose loads also warn. */
async function crashedAndWarning(): Promise<MemorySessionPersistence> {
  const backend = new MemorySessionPersistence()
  const first = await spine({ model: { script: ['never delivered'] } })
  await first.root.plugin(memoryPersistence, { backend })
  const { agent } = await first.root.agents.create({ sessionId: id, agentOptions: opts })
  const call = first.model.control()
  agent.followup('question')
  await call.started
  await first.root.sessions.flush(agent.session)
  const reopened = backend.reopen()
  const load = reopened.load.bind(reopened)
  reopened.load = async (sessionId) => ({ ...(await load(sessionId)), warnings: tornTail })
  return reopened
}

describe('a resume rolled back after its load still reports what the load cut and repaired', () => {
  it('a setup that fails after the load: the resume rejects with its error, and the torn tail and the repairs are logged as warnings', async () => {
    const backend = await crashedAndWarning()
    const { root } = await spine()
    await root.plugin(memoryPersistence, { backend })
    const lines: string[] = []
    root.logger.exporter({ colors: false, levels: { default: 2 }, export: (message) => void lines.push(Logger.format({ colors: false, export() {} }, message)) })
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
    const backend = await crashedAndWarning()
    const { root } = await spine()
    await root.plugin(memoryPersistence, { backend })
    const lines: string[] = []
    root.logger.exporter({ colors: false, levels: { default: 2 }, export: (message) => void lines.push(Logger.format({ colors: false, export() {} }, message)) })
    const handle = await root.agents.resume({ resumeSessionId: id, agentOptions: opts })
    expect(handle.loadReport?.warnings).toEqual(tornTail)
    expect(lines).toEqual([])
  })
})
