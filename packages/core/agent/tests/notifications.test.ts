import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { agentEvents, initiator, withInitiator } from '@deepseek-ai/dsh-agent'
import { scoped } from '@deepseek-ai/dsh-scope'
import { fakeAgent } from './helpers'

describe('agentEvents', () => {
  it('emits scope-filtered notifications and contains listener failures', () => {
    const root = new Context()
    const a = fakeAgent(root, 'a')
    const seen: string[] = []
    root.on('agent/status', (agent, status) => void seen.push(`global:${agent.id}:${status}`))
    root.on('agent/status', () => {
      throw new Error('observer bug')
    })
    scoped(root, 'a').on('agent/status', (_, status) => void seen.push(`a:${status}`))
    scoped(root, 'b').on('agent/status', (_, status) => void seen.push(`b:${status}`))
    expect(() => agentEvents(root, a).emit('agent/status', 'running')).not.toThrow()
    expect(seen).toEqual(['global:a:running', 'a:running'])
  })
})

describe('initiator scope', () => {
  it('follows async work started inside withInitiator and is absent outside', async () => {
    const root = new Context()
    const a = fakeAgent(root, 'a')
    const b = fakeAgent(root, 'b')
    expect(initiator()).toBeUndefined()
    const seen = await Promise.all([
      withInitiator(a, async () => {
        await new Promise((resolve) => setTimeout(resolve, 1))
        return initiator()?.id
      }),
      withInitiator(b, async () => {
        await Promise.resolve()
        return withInitiator(a, () => initiator()?.id) + '/' + initiator()?.id
      }),
    ])
    expect(seen).toEqual(['a', 'a/b'])
    expect(initiator()).toBeUndefined()
  })
})
