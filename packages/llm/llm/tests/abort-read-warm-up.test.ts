import { afterEach, describe, expect, it, vi } from 'vitest'

const Real = globalThis.AbortController

afterEach(() => {
  globalThis.AbortController = Real
})

describe('the abort check warm-up', () => {
  it('makes no signal when the module loads; the first native signal checked warms the getter once', async () => {
    let made = 0
    globalThis.AbortController = class extends Real {
      constructor() {
        super()
        made++
      }
    }
    vi.resetModules()
    const { readsAbortedNatively, isSignalAborted } = await import('../src/abort-read')
    expect(made).toBe(0)
    const controller = new Real()
    expect(readsAbortedNatively({ aborted: false } as unknown as AbortSignal)).toBe(false)
    expect(made).toBe(0)
    expect(readsAbortedNatively(controller.signal)).toBe(true)
    expect(made).toBe(32)
    expect(readsAbortedNatively(new Real().signal)).toBe(true)
    expect(made).toBe(32)
    expect(isSignalAborted(controller.signal, true)).toBe(false)
    controller.abort()
    expect(isSignalAborted(controller.signal, true)).toBe(true)
  })
})
