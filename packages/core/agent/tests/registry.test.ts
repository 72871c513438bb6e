import { Context } from 'cordis'
import { describe, expect, it, vi } from 'vitest'
import Agents, { AgentError, type AgentFactory, type AgentHandle, type Agent } from '@deepseek-ai/dsh-agent'
import { SessionId } from '@deepseek-ai/dsh-session'
import { scoped } from '@deepseek-ai/dsh-scope'
import { fakeAgent } from './helpers'

async function setup() {
  const root = new Context()
  await root.plugin(Agents)
  return root
}

describe('ctx.agents factory seam', () => {
  it('create and resume reject with NO_FACTORY when no factory is registered', async () => {
    const root = await setup()
    await expect(root.agents.create({ sessionId: SessionId('a') })).rejects.toMatchObject({ code: 'NO_FACTORY' })
    await expect(root.agents.resume({ resumeSessionId: SessionId('a') })).rejects.toBeInstanceOf(AgentError)
  })

  it('passes the calling context as the owner, and the factory reverts with the fiber that set it', async () => {
    const root = await setup()
    const owners: Context[] = []
    const factory: AgentFactory = {
      createAgent: async (owner) => {
        owners.push(owner)
        return { agent: {} as Agent, dispose: async () => {} } satisfies AgentHandle
      },
      resume: async () => ({ agent: {} as Agent, dispose: async () => {} }),
    }
    const provider = root.plugin({ inject: ['agents'], apply: (ctx: Context) => void ctx.agents.setFactory(factory) })
    await provider
    let callerFiber: unknown
    await root.plugin({
      inject: ['agents'],
      apply: async (ctx: Context) => {
        callerFiber = ctx.fiber
        await ctx.agents.create({ sessionId: SessionId('a') })
      },
    })
    expect(owners).toHaveLength(1)
    expect(owners[0]!.fiber).toBe(callerFiber)
    await provider.dispose()
    expect(root.agents.factory).toBeUndefined()
  })

  it('stacks factories: the newest wins and disposing it uncovers the previous one', async () => {
    const root = await setup()
    const make = (name: string): AgentFactory => ({
      createAgent: async () => ({ agent: { name } as unknown as Agent, dispose: async () => {} }),
      resume: async () => ({ agent: {} as Agent, dispose: async () => {} }),
    })
    const first = make('first')
    const second = make('second')
    root.agents.setFactory(first)
    const undo = root.agents.setFactory(second)
    expect(root.agents.factory).toBe(second)
    undo()
    expect(root.agents.factory).toBe(first)
  })
})

describe('ctx.agents.enter', () => {
  it('publishes the agent and announces it, scope-filtered', async () => {
    const root = await setup()
    const a = fakeAgent(root, 'a')
    const b = fakeAgent(root, 'b')
    const seen: string[] = []
    root.on('agent/created', (agent) => void seen.push(`global:${agent.id}`))
    scoped(root, 'a').on('agent/created', (agent) => void seen.push(`a-scope:${agent.id}`))
    root.agents.enter(a)
    root.agents.enter(b)
    expect(seen).toEqual(['global:a', 'a-scope:a', 'global:b'])
    expect(root.agents.get('a')).toBe(a)
    expect(root.agents.list()).toEqual([a, b])
  })

  it('refuses a second live agent with the same id', async () => {
    const root = await setup()
    root.agents.enter(fakeAgent(root, 'a'))
    expect(() => root.agents.enter(fakeAgent(root, 'a'))).toThrow(expect.objectContaining({ code: 'DUPLICATE_ID' }))
  })

  it('a synchronous created listener throw vetoes: rolled back, paired disposed, error rethrown', async () => {
    const root = await setup()
    const log: string[] = []
    root.on('agent/created', (agent) => void log.push(`created:${agent.id}`))
    root.on('agent/created', () => {
      throw new Error('veto')
    })
    root.on('agent/disposed', (agent) => void log.push(`disposed:${agent.id}`))
    expect(() => root.agents.enter(fakeAgent(root, 'a'))).toThrow('veto')
    expect(root.agents.get('a')).toBeUndefined()
    expect(log).toEqual(['created:a', 'disposed:a'])
  })

  it('a rejected promise from a created listener is logged, not a veto', async () => {
    const root = await setup()
    const warn = vi.fn()
    root.logger.exporter({ export: (message) => warn(message.type) })
    root.on('agent/created', (async () => {
      throw new Error('late')
    }) as never)
    root.agents.enter(fakeAgent(root, 'a'))
    await new Promise((resolve) => setImmediate(resolve))
    expect(root.agents.get('a')).toBeDefined()
    expect(warn).toHaveBeenCalledWith('warn')
  })

  it('detach is bound to the exact object: a stale detach never removes a later same-id agent', async () => {
    const root = await setup()
    const disposed: Agent[] = []
    root.on('agent/disposed', (agent) => void disposed.push(agent))
    const first = fakeAgent(root, 'a')
    const detachFirst = root.agents.enter(first)
    detachFirst()
    const second = fakeAgent(root, 'a')
    root.agents.enter(second)
    detachFirst()
    expect(root.agents.get('a')).toBe(second)
    expect(disposed).toEqual([first])
  })
})
