import { describe, expect, it } from 'vitest'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { SessionId } from '@deepseek-ai/dsh-session'
import { spine } from '@deepseek-ai/dsh-testkit'

const id = SessionId('a')
const opts = { provider: 'scripted', model: 'test-model' }

/** Runs `admit` and returns the refusal's code and message (or 'admitted'). */
function attempt(admit: () => unknown): { code: string; message: string } | 'admitted' {
  try {
    admit()
    return 'admitted'
  } catch (error) {
    const { code, message } = error as { code: string; message: string }
    return { code, message }
  }
}

describe('admission opens at agent/created and closes with the teardown (R-LIFE-1, R-LIFE-5)', () => {
  it('R-LIFE-1: the NOT_PUBLISHED refusal tells a session/created listener that the agent accepts input from agent/created on', async () => {
    const { root } = await spine({ model: { script: ['hello'] } })
    const outcomes: ReturnType<typeof attempt>[] = []
    root.on('session/created', (session) => void outcomes.push(attempt(() => root.agents.get(session.id)!.followup('too early'))))
    root.on('agent/created', (agent) => void outcomes.push(attempt(() => agent.followup('greet'))))
    const { agent } = await root.agents.create({ sessionId: id, agentOptions: opts })
    await agent.whenIdle()
    expect(outcomes).toEqual([
      {
        code: 'NOT_PUBLISHED',
        message: 'agent a is not published yet: it accepts input from its agent/created announcement on (not from setup or a session/created listener)',
      },
      'admitted',
    ])
  })

  it('R-LIFE-5: after a vetoed publication the agent refuses input with DISPOSED, and whenIdle() resolves at once', async () => {
    const { root, model } = await spine({ model: { script: ['never'] } })
    let captured: Agent | undefined
    root.on('agent/created', (agent) => void (captured = agent))
    root.on('agent/created', () => {
      throw new Error('veto')
    })
    await expect(root.agents.create({ sessionId: id, agentOptions: opts })).rejects.toThrow('veto')
    expect(attempt(() => captured!.followup('late'))).toEqual({ code: 'DISPOSED', message: 'agent a is disposed' })
    await captured!.whenIdle()
    expect(model.calls).toBe(0)
  })
})
