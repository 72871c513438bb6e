// Disposing at awkward moments: from a status listener, while a setup never settles, and from a
// listener of the teardown itself. One teardown, reached from anywhere, and never held up.
import { describe, expect, it } from 'vitest'
import { SessionId } from '@deepseek-ai/dsh-session'
import { settle, spine, trace } from '@deepseek-ai/dsh-testkit'

const id = SessionId('a')
const opts = { provider: 'scripted', model: 'test-model' }

describe('teardown at awkward moments (R-LIFE-5, R-LIFE-6)', () => {
  it('dispose from an agent/status listener stops the drain before a turn opens', async () => {
    const { root, model } = await spine({ model: { script: ['never'] } })
    const handle = await root.agents.create({ sessionId: id, agentOptions: opts })
    root.on('agent/status', (_agent, status) => void (status === 'running' && handle.dispose()))
    handle.agent.steer('go')
    await handle.dispose()
    expect(model.calls).toBe(0)
    expect(trace(handle.agent.session)).toEqual(['inbox/enqueue next-step "go"', 'inbox/discard ×1'])
  })

  it('a setup that never settles does not hold up the loop\'s unload; the create rejects ABORTED', async () => {
    const { root, loop } = await spine()
    const creating = root.agents.create({ sessionId: id, agentOptions: opts, setup: () => new Promise(() => {}) })
    await settle()
    await loop.dispose()
    await expect(creating).rejects.toMatchObject({ code: 'ABORTED' })
    expect(root.agents.get(id)).toBeUndefined()
  })

  it('dispose() from a listener of the teardown itself returns the same promise', async () => {
    const { root } = await spine()
    const handle = await root.agents.create({ sessionId: id, agentOptions: opts })
    let inner: Promise<void> | undefined
    root.on('agent/inbox/discard', () => void (inner = handle.dispose()))
    handle.agent.queue('pending')
    const outer = handle.dispose()
    await outer
    expect(inner).toBe(outer)
  })
})
