import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import RegistryPairing from '@deepseek-ai/dsh-agent/invariant'
import Invariants from '@deepseek-ai/dsh-invariants'
import { SessionId, memoryPersistence, MemorySessionPersistence } from '@deepseek-ai/dsh-session'
import { spine } from '@deepseek-ai/dsh-testkit'

const id = SessionId('a')
const opts = { provider: 'scripted', model: 'test-model' }

/**
 * The lifecycle notifications, each with what the registries hold for its id
 * at that moment: `A` the agent is in ctx.agents, `S` the session is in
 * ctx.sessions, `-` neither.
 */
function lifecycleLog(root: Context) {
  const log: string[] = []
  const held = (sessionId: string) =>
    `${root.agents.get(sessionId) ? 'A' : ''}${root.sessions.get(sessionId) ? 'S' : ''}` || '-'
  root.on('session/created', (s) => void log.push(`session/created [${held(s.id)}]`))
  root.on('session/disposed', (s) => void log.push(`session/disposed [${held(s.id)}]`))
  root.on('agent/created', (a) => void log.push(`agent/created [${held(a.id)}]`))
  root.on('agent/disposed', (a) => void log.push(`agent/disposed [${held(a.id)}]`))
  root.on('agent/session-start', (a, source) => void log.push(`agent/session-start ${source}`))
  return log
}

describe('R-LIFE-1: enter both registries, then announce both', () => {
  it('R-LIFE-1: a session/created listener finds the agent in ctx.agents, with this session', async () => {
    const { root } = await spine()
    const log = lifecycleLog(root)
    const found: unknown[] = []
    root.on('session/created', (session) => {
      const agent = root.agents.get(session.id)
      found.push(agent?.session === session)
    })
    const handle = await root.agents.create({ sessionId: id, agentOptions: opts })
    expect(found).toEqual([true])
    expect(log).toEqual(['session/created [AS]', 'agent/created [AS]', 'agent/session-start startup'])
    await handle.dispose()
    expect(log.slice(3)).toEqual(['agent/disposed [S]', 'session/disposed [-]'])
  })

  it('R-LIFE-1: the same order for resume and for the synchronous agentLoop.create', async () => {
    const backend = new MemorySessionPersistence()
    const { root } = await spine()
    await root.plugin(memoryPersistence, { backend })
    const created = await root.agents.create({ sessionId: id, agentOptions: opts })
    await root.sessions.flush(created.agent.session)
    await created.dispose()
    const log = lifecycleLog(root)
    const resumed = await root.agents.resume({ resumeSessionId: id, agentOptions: opts })
    await resumed.dispose()
    let sync!: { id: string }
    const owner = root.plugin({ inject: ['agentLoop'], apply: (ctx: Context) => void (sync = ctx.agentLoop.create('sync', opts)) })
    await owner
    await owner.dispose()
    expect(sync.id).toBe('sync')
    expect(log).toEqual([
      'session/created [AS]',
      'agent/created [AS]',
      'agent/session-start resume',
      'agent/disposed [S]',
      'session/disposed [-]',
      'session/created [AS]',
      'agent/created [AS]',
      'agent/session-start startup',
      'agent/disposed [S]',
      'session/disposed [-]',
    ])
  })

  it('R-LIFE-1: a vetoing session/created listener rolls both back: the agent leaves silently (never announced), the session with its paired disposal', async () => {
    const { root } = await spine()
    await root.plugin(Invariants, { policy: 'collect' })
    await root.plugin(RegistryPairing)
    const log = lifecycleLog(root)
    root.on('session/created', () => {
      throw new Error('veto session')
    })
    await expect(root.agents.create({ sessionId: id, agentOptions: opts })).rejects.toThrow('veto session')
    expect(log).toEqual(['session/created [AS]', 'session/disposed [-]'])
    expect([root.agents.list(), root.sessions.list()]).toEqual([[], []])
    expect(await root.invariants.check()).toEqual([])
  })

  it('R-LIFE-1: a vetoing agent/created listener rolls both back, each paired, the agent first', async () => {
    const { root } = await spine()
    await root.plugin(Invariants, { policy: 'collect' })
    await root.plugin(RegistryPairing)
    const log = lifecycleLog(root)
    const veto = root.on('agent/created', () => {
      throw new Error('veto agent')
    })
    await expect(root.agents.create({ sessionId: id, agentOptions: opts })).rejects.toThrow('veto agent')
    expect(log).toEqual(['session/created [AS]', 'agent/created [AS]', 'agent/disposed [S]', 'session/disposed [-]'])
    expect([root.agents.list(), root.sessions.list()]).toEqual([[], []])
    expect(await root.invariants.check()).toEqual([])
    veto()
    const again = await root.agents.create({ sessionId: id, agentOptions: opts })
    expect(root.agents.get(id)).toBe(again.agent)
  })

  it('R-LIFE-1: admission opens with agent/created: a session/created listener that drives the agent is refused (NOT_PUBLISHED), an agent/created one is not', async () => {
    const { root, model } = await spine({ model: { script: ['hello'] } })
    const outcomes: string[] = []
    root.on('session/created', (session) => {
      try {
        root.agents.get(session.id)!.followup('too early')
        outcomes.push('session/created: admitted')
      } catch (error) {
        outcomes.push(`session/created: ${(error as { code: string }).code}`)
      }
    })
    root.on('agent/created', (agent) => {
      agent.followup('greet')
      outcomes.push('agent/created: admitted')
    })
    const { agent } = await root.agents.create({ sessionId: id, agentOptions: opts })
    await agent.whenIdle()
    expect(outcomes).toEqual(['session/created: NOT_PUBLISHED', 'agent/created: admitted'])
    expect(model.calls).toBe(1)
  })
})
