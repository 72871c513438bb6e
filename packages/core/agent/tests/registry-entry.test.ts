import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Agents, { type AgentEntry } from '@deepseek-ai/dsh-agent'
import { fakeAgent } from './helpers'

async function setup() {
  const root = new Context()
  await root.plugin(Agents)
  const log: string[] = []
  root.on('agent/created', (agent) => void log.push(`created ${agent.id} (get: ${root.agents.get(agent.id) === agent})`))
  root.on('agent/disposed', (agent) => void log.push(`disposed ${agent.id} (get: ${root.agents.get(agent.id) === agent})`))
  return { root, log }
}

describe('ctx.agents.enterUnannounced: enter now, announce later (R-LIFE-1)', () => {
  it('is in get/list at once; agent/created comes with announce(); detach emits the paired agent/disposed once', async () => {
    const { root, log } = await setup()
    const agent = fakeAgent(root, 'a')
    const entry = root.agents.enterUnannounced(agent)
    expect([root.agents.get('a'), root.agents.list(), log]).toEqual([agent, [agent], []])
    entry.announce()
    entry.detach()
    entry.detach()
    expect(log).toEqual(['created a (get: true)', 'disposed a (get: false)'])
  })

  it('a detach before announce() removes the agent silently; announce() then refuses (DISPOSED)', async () => {
    const { root, log } = await setup()
    const entry = root.agents.enterUnannounced(fakeAgent(root, 'a'))
    entry.detach()
    expect(root.agents.get('a')).toBeUndefined()
    expect(() => entry.announce()).toThrow(expect.objectContaining({ code: 'DISPOSED' }))
    expect(log).toEqual([])
  })

  it('a vetoing listener: announce() rethrows and the agent stays entered until the caller detaches it, paired', async () => {
    const { root, log } = await setup()
    root.on('agent/created', () => {
      throw new Error('veto')
    })
    const agent = fakeAgent(root, 'a')
    const entry = root.agents.enterUnannounced(agent)
    expect(() => entry.announce()).toThrow('veto')
    expect(root.agents.get('a')).toBe(agent)
    entry.detach()
    expect(log).toEqual(['created a (get: true)', 'disposed a (get: false)'])
  })

  it('a detach asked by a created listener runs once the dispatch has unwound', async () => {
    const { root, log } = await setup()
    let entry!: AgentEntry
    root.on('agent/created', () => {
      entry.detach()
      log.push('listener asked for the detach')
    })
    root.on('agent/created', () => void log.push('later listener'))
    entry = root.agents.enterUnannounced(fakeAgent(root, 'a'))
    entry.announce()
    expect(log).toEqual(['created a (get: true)', 'listener asked for the detach', 'later listener', 'disposed a (get: false)'])
  })

  it('refuses a live id (DUPLICATE_ID); a stale entry never removes a later agent of the same id', async () => {
    const { root } = await setup()
    const first = root.agents.enterUnannounced(fakeAgent(root, 'a'))
    expect(() => root.agents.enterUnannounced(fakeAgent(root, 'a'))).toThrow(expect.objectContaining({ code: 'DUPLICATE_ID' }))
    first.announce()
    expect(() => first.announce()).toThrow(expect.objectContaining({ code: 'DUPLICATE_ID' }))
    first.detach()
    const later = fakeAgent(root, 'a')
    root.agents.enter(later)
    first.detach()
    expect(root.agents.get('a')).toBe(later)
  })
})
