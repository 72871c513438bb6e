import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { SessionId, type LoadedSession, type SessionLoadOptions, type SessionPersistence } from '@deepseek-ai/dsh-session'
import { deferred, spine } from '@deepseek-ai/dsh-testkit'

const id = SessionId('a')
const opts = { provider: 'scripted', model: 'test-model' }

/** A backend whose `load` hangs, recording the signal it was given. */
function hangingLoad(root: Context) {
  const started = deferred<AbortSignal | undefined>()
  const backend: Pick<SessionPersistence, 'load' | 'exists'> = {
    load: (_id, options?: SessionLoadOptions) => {
      started.resolve(options?.signal)
      return new Promise<LoadedSession>(() => {})
    },
    exists: async () => true,
  }
  root.provide('sessionPersistence', backend as SessionPersistence)
  return started.promise
}

describe('resume passes its stop signal to the load (issue 16): a backend can let go of an abandoned load', () => {
  it('the owner unloading aborts the signal the load received, with the call’s ABORTED error as reason', async () => {
    const { root } = await spine()
    const started = hangingLoad(root)
    let call!: Promise<unknown>
    const owner = root.plugin({
      inject: ['agents'],
      apply: (ctx: Context) => {
        call = ctx.agents.resume({ resumeSessionId: id, agentOptions: opts })
        call.catch(() => {})
      },
    })
    await owner
    const signal = await started
    expect(signal?.aborted).toBe(false)
    await owner.dispose()
    expect(signal?.aborted).toBe(true)
    expect(signal?.reason).toMatchObject({ code: 'ABORTED', message: 'resume("a") was aborted before the agent was published: its owner unloaded' })
    await expect(call).rejects.toBe(signal?.reason)
  })

  it('the caller’s own signal reaches the load the same way', async () => {
    const { root } = await spine()
    const started = hangingLoad(root)
    const controller = new AbortController()
    const call = root.agents.resume({ resumeSessionId: id, agentOptions: opts, signal: controller.signal })
    const signal = await started
    controller.abort(new Error('user pressed Ctrl-C'))
    expect(signal?.aborted).toBe(true)
    await expect(call).rejects.toMatchObject({ code: 'ABORTED', message: expect.stringContaining('its signal aborted') })
  })
})
