// A resume can be aborted by the caller's signal while its load is still under way.
import { describe, expect, it } from 'vitest'
import { SessionId } from '@deepseek-ai/dsh-session'
import { deferred, spine } from '@deepseek-ai/dsh-testkit'

const id = SessionId('a')

describe("a resume's own signal aborts it while it loads (R-LIFE-7)", () => {
  it('the signal aborts a resume while it loads', async () => {
    const { root } = await spine()
    const gate = deferred()
    root.provide('sessionPersistence', { load: () => gate.promise, exists: async () => true } as never)
    const controller = new AbortController()
    const resuming = root.agents.resume({ resumeSessionId: id, signal: controller.signal })
    controller.abort()
    await expect(resuming).rejects.toMatchObject({ code: 'ABORTED' })
    gate.resolve()
  })
})
