// inject() never overtakes the agent's start or a maintenance task: it lands after agent/session-start,
// and waits for maintenance to settle (maintenance is exclusive with turns).
import { describe, expect, it } from 'vitest'
import { SessionId } from '@deepseek-ai/dsh-session'
import { deferred, settle, spine, trace } from '@deepseek-ai/dsh-testkit'

const id = SessionId('a')
const opts = { provider: 'scripted', model: 'test-model' }

describe('injections wait for the start and for maintenance (R-IN-7)', () => {
  it('an inject() from an agent/created listener lands after agent/session-start', async () => {
    const { root } = await spine()
    const order: string[] = []
    root.on('agent/created', (agent) => void agent.inject('house rules'))
    root.on('agent/session-start', () => void order.push('session-start'))
    root.on('session/event', (_s, event) => void (event.type === 'turn/start' && order.push('turn/start')))
    const { agent } = await root.agents.create({ sessionId: id, agentOptions: opts })
    await agent.whenIdle()
    expect(order).toEqual(['session-start', 'turn/start'])
    expect(trace(agent.session)).toEqual(['turn/start 1 injection', 'user/message "house rules"', 'turn/end 1 completed'])
  })

  it('an inject() while maintenance runs waits for it to settle (maintenance is exclusive with turns)', async () => {
    const { agent } = await spine()
    const a = await agent()
    const gate = deferred()
    const maintenance = a.runMaintenance(async () => {
      a.inject('noted during maintenance')
      await gate.promise
      return trace(a.session).length
    })
    await settle()
    expect(trace(a.session)).toEqual([])
    gate.resolve()
    expect(await maintenance).toBe(0)
    await a.whenIdle()
    expect(trace(a.session)).toEqual(['turn/start 1 injection', 'user/message "noted during maintenance"', 'turn/end 1 completed'])
  })
})
