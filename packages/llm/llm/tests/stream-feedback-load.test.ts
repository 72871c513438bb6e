import { describe, expect, it, vi } from 'vitest'

describe("the chunk path's feedback prime, seen from the package", () => {
  it('runs neither when the package root loads nor when the service mounts and prepares a call', async () => {
    vi.resetModules()
    const { Context } = await import('cordis')
    const { default: LlmService } = await import('../src/index')
    const feedback = await import('../src/stream-feedback')
    expect(feedback.streamPathPrimed()).toBe(false)
    const root = new Context()
    await root.plugin(LlmService)
    await root.llm.prepareCall({ provider: 'p', model: 'm' })
    expect(feedback.streamPathPrimed()).toBe(false)
  })
})
