import { getEventListeners } from 'node:events'
import { Context } from 'cordis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { DEFAULT_TOOL_TIMEOUT_MS } from '@deepseek-ai/dsh-tools'
import { call, deferred, echoTool, fakeAgent, mountTools, resultText } from './helpers'

afterEach(() => {
  vi.useRealTimers()
})

describe('cancellation and timeouts', () => {
  it('a call whose signal is already aborted is ABORTED_BEFORE_DISPATCH with the exact text, and nothing runs', async () => {
    const root = await mountTools()
    const trace: string[] = []
    root.tools.register(echoTool('read', () => (trace.push('body'), 'x')))
    root.on('tools/pre-execute', async (_i, next) => (trace.push('pre'), next()))
    const controller = new AbortController()
    controller.abort()
    const result = await root.tools.execute(call('read'), { agent: fakeAgent(root, 'a'), signal: controller.signal })
    expect(result.error).toEqual({ code: 'ABORTED_BEFORE_DISPATCH', message: 'tool call aborted before dispatch' })
    expect(resultText(result)).toEqual({ text: 'Error: tool call aborted before dispatch', isError: true })
    expect(trace).toEqual([])
  })

  it('reads the signal as signal.aborted does: a signal whose own aborted says so is refused before dispatch', async () => {
    const root = await mountTools()
    const trace: string[] = []
    root.tools.register(echoTool('read', () => (trace.push('body'), 'x')))
    const shadowed = new AbortController().signal
    Object.defineProperty(shadowed, 'aborted', { value: true })
    const result = await root.tools.execute(call('read'), { agent: fakeAgent(root, 'a'), signal: shadowed })
    expect([result.error, trace]).toEqual([{ code: 'ABORTED_BEFORE_DISPATCH', message: 'tool call aborted before dispatch' }, []])
  })

  it('an abort while waiting for approval returns ABORTED_BEFORE_DISPATCH at once', async () => {
    const root = await mountTools()
    let ran = false
    root.tools.register(echoTool('rm', () => ((ran = true), 'x')))
    root.on('tools/pre-execute', async () => ({ kind: 'ask' }))
    const asked = deferred()
    const answer = deferred<'allow' | 'deny'>()
    await root.plugin({
      apply: (ctx: Context) =>
        void ctx.provide('approval', {
          request: () => (asked.resolve(), answer.promise),
        }),
    })
    const controller = new AbortController()
    const pending = root.tools.execute(call('rm'), { agent: fakeAgent(root, 'a'), signal: controller.signal })
    await asked.promise
    controller.abort()
    const result = await pending
    expect(result.error?.code).toBe('ABORTED_BEFORE_DISPATCH')
    answer.resolve('allow')
    await Promise.resolve()
    expect(ran).toBe(false)
  })

  it('an abort while a guard is pending returns ABORTED_BEFORE_DISPATCH', async () => {
    const root = await mountTools()
    root.tools.register(echoTool('rm'))
    const entered = deferred()
    root.tools.guard(() => (entered.resolve(), new Promise(() => {})))
    const controller = new AbortController()
    const pending = root.tools.execute(call('rm'), { agent: fakeAgent(root, 'a'), signal: controller.signal })
    await entered.promise
    controller.abort()
    expect((await pending).error?.code).toBe('ABORTED_BEFORE_DISPATCH')
  })

  it('an abort in a tools/execute wrapper before next() is ABORTED_BEFORE_DISPATCH', async () => {
    const root = await mountTools()
    let ran = false
    root.tools.register(echoTool('read', () => ((ran = true), 'x')))
    const controller = new AbortController()
    root.on('tools/execute', async (_dispatch, next) => {
      controller.abort()
      return next()
    })
    const result = await root.tools.execute(call('read'), { agent: fakeAgent(root, 'a'), signal: controller.signal })
    expect(result.error?.code).toBe('ABORTED_BEFORE_DISPATCH')
    expect(ran).toBe(false)
  })

  it('an abort after the body started waits for the body; a body that throws gets ABORTED', async () => {
    const root = await mountTools()
    const started = deferred()
    const controller = new AbortController()
    root.tools.register(
      echoTool(
        'sleep',
        (_args, run) =>
          new Promise((_, reject) => {
            started.resolve()
            run.signal.addEventListener('abort', () => reject(run.signal.reason))
          }),
      ),
    )
    const pending = root.tools.execute(call('sleep'), { agent: fakeAgent(root, 'a'), signal: controller.signal })
    await started.promise
    controller.abort(new Error('user cancelled'))
    const result = await pending
    expect(result.error).toEqual({ code: 'ABORTED', message: 'tool call aborted' })
    expect(resultText(result)).toEqual({ text: 'Error: tool call aborted', isError: true })
  })

  it('a body that finishes anyway after the abort keeps its real result', async () => {
    const root = await mountTools()
    const started = deferred()
    const finish = deferred<string>()
    const controller = new AbortController()
    root.tools.register(echoTool('write', () => (started.resolve(), finish.promise)))
    let settled = false
    const pending = root.tools.execute(call('write'), { agent: fakeAgent(root, 'a'), signal: controller.signal }).finally(() => (settled = true))
    await started.promise
    controller.abort()
    await Promise.resolve()
    await Promise.resolve()
    expect(settled).toBe(false)
    finish.resolve('wrote 3 files')
    const result = await pending
    expect(result.error).toBeUndefined()
    expect(resultText(result)).toEqual({ text: 'wrote 3 files', isError: false })
  })

  it("timeoutMs aborts the body's signal and returns TIMEOUT without waiting for a body that ignores it", async () => {
    vi.useFakeTimers()
    const root = await mountTools()
    let bodySignal: AbortSignal | undefined
    root.tools.register(echoTool('hang', (_args, run) => ((bodySignal = run.signal), new Promise(() => {})), { timeoutMs: 5_000 }))
    const pending = root.tools.execute(call('hang'), { agent: fakeAgent(root, 'a') })
    await vi.advanceTimersByTimeAsync(5_000)
    const result = await pending
    expect(result.error).toEqual({ code: 'TIMEOUT', message: 'tool timed out after 5000 ms' })
    expect(resultText(result).text).toBe('Error: tool timed out after 5000 ms')
    expect(bodySignal?.aborted).toBe(true)
  })

  it('the config defaultTimeoutMs applies to tools without their own', async () => {
    vi.useFakeTimers()
    const root = await mountTools({ defaultTimeoutMs: 1_000 })
    root.tools.register(echoTool('hang', () => new Promise(() => {})))
    root.tools.register(echoTool('own', () => new Promise(() => {}), { timeoutMs: 3_000 }))
    const hang = root.tools.execute(call('hang'), { agent: fakeAgent(root, 'a') })
    const own = root.tools.execute(call('own'), { agent: fakeAgent(root, 'a') })
    await vi.advanceTimersByTimeAsync(3_000)
    expect((await hang).error?.message).toBe('tool timed out after 1000 ms')
    expect((await own).error?.message).toBe('tool timed out after 3000 ms')
  })

  it('every call has a deadline: by default a tool without timeoutMs times out after two minutes, its signal aborted', async () => {
    vi.useFakeTimers()
    const root = await mountTools()
    let bodySignal: AbortSignal | undefined
    root.tools.register(echoTool('hang', (_args, run) => ((bodySignal = run.signal), new Promise(() => {}))))
    const pending = root.tools.execute(call('hang'), { agent: fakeAgent(root, 'a') })
    await vi.advanceTimersByTimeAsync(DEFAULT_TOOL_TIMEOUT_MS - 1)
    expect(bodySignal?.aborted).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    const result = await pending
    expect(DEFAULT_TOOL_TIMEOUT_MS).toBe(120_000)
    expect(result.error).toEqual({ code: 'TIMEOUT', message: 'tool timed out after 120000 ms' })
    expect(bodySignal?.reason).toEqual(expect.objectContaining({ code: 'TIMEOUT' }))
  })

  it('defaultTimeoutMs: 0 turns the default deadline off (no timer at all)', async () => {
    vi.useFakeTimers()
    const root = await mountTools({ defaultTimeoutMs: 0 })
    const finish = deferred<string>()
    root.tools.register(echoTool('slow', () => finish.promise))
    const pending = root.tools.execute(call('slow'), { agent: fakeAgent(root, 'a') })
    await vi.advanceTimersByTimeAsync(10 * DEFAULT_TOOL_TIMEOUT_MS)
    expect(vi.getTimerCount()).toBe(0)
    finish.resolve('done at last')
    expect(resultText(await pending)).toEqual({ text: 'done at last', isError: false })
  })

  it('a tool that declares timeoutMs: 0 has no deadline (no timer) whatever the default; the caller\'s abort still reaches it', async () => {
    vi.useFakeTimers()
    const root = await mountTools({ defaultTimeoutMs: 1_000 })
    const finish = deferred<string>()
    root.tools.register(echoTool('supervisor', () => finish.promise, { timeoutMs: 0 }))
    const pending = root.tools.execute(call('supervisor'), { agent: fakeAgent(root, 'a') })
    await vi.advanceTimersByTimeAsync(10 * DEFAULT_TOOL_TIMEOUT_MS)
    expect(vi.getTimerCount()).toBe(0)
    finish.resolve('done at last')
    expect(resultText(await pending)).toEqual({ text: 'done at last', isError: false })

    const controller = new AbortController()
    root.tools.register(echoTool('listens', (_args, run) => new Promise((_, reject) => run.signal.addEventListener('abort', () => reject(run.signal.reason))), { timeoutMs: 0 }))
    const cancelled = root.tools.execute(call('listens'), { agent: fakeAgent(root, 'a'), signal: controller.signal })
    await vi.advanceTimersByTimeAsync(0)
    controller.abort(new Error('turn cancelled'))
    expect((await cancelled).error).toEqual({ code: 'ABORTED', message: 'tool call aborted' })
  })

  it('a body that reads its signal only after the deadline passed finds it aborted', async () => {
    vi.useFakeTimers()
    const root = await mountTools({ defaultTimeoutMs: 1_000 })
    const late = deferred()
    let seen: AbortSignal | undefined
    root.tools.register(echoTool('late', async (_args, run) => (await late.promise, (seen = run.signal), 'x')))
    const pending = root.tools.execute(call('late'), { agent: fakeAgent(root, 'a') })
    await vi.advanceTimersByTimeAsync(1_000)
    expect((await pending).error?.code).toBe('TIMEOUT')
    late.resolve()
    await vi.waitFor(() => expect(seen?.aborted).toBe(true))
  })

  it("the caller's abort reaches a body with a deadline, and settled calls leave no listener on the caller's signal", async () => {
    const root = await mountTools()
    const controller = new AbortController()
    const agent = fakeAgent(root, 'a')
    root.tools.register(echoTool('peek', (_args, run) => (run.signal.aborted ? 'aborted' : 'running')))
    for (let i = 0; i < 3; i++) await root.tools.execute(call('peek'), { agent, signal: controller.signal })
    expect(getEventListeners(controller.signal, 'abort')).toEqual([])
    const started = deferred<AbortSignal>()
    root.tools.register(echoTool('wait', (_args, run) => (started.resolve(run.signal), new Promise((_, reject) => run.signal.addEventListener('abort', () => reject(run.signal.reason))))))
    const pending = root.tools.execute(call('wait'), { agent, signal: controller.signal })
    const bodySignal = await started.promise
    controller.abort(new Error('turn cancelled'))
    expect(bodySignal.reason).toEqual(new Error('turn cancelled'))
    expect((await pending).error).toEqual({ code: 'ABORTED', message: 'tool call aborted' })
    expect(getEventListeners(controller.signal, 'abort')).toEqual([])
  })

  it("a wrapper's timeout signal that aborts the body classifies as TIMEOUT", async () => {
    vi.useFakeTimers()
    const root = await mountTools()
    root.tools.register(
      echoTool('slow', (_args, run) => new Promise((_, reject) => run.signal.addEventListener('abort', () => reject(run.signal.reason)))),
    )
    root.on('tools/execute', async (dispatch, next) => {
      // What AbortSignal.timeout() does, on a timer the test controls.
      const timeout = new AbortController()
      const timer = setTimeout(() => timeout.abort(new DOMException('The operation timed out.', 'TimeoutError')), 2_000)
      dispatch.signal = timeout.signal
      try {
        return await next()
      } finally {
        clearTimeout(timer)
      }
    })
    const pending = root.tools.execute(call('slow'), { agent: fakeAgent(root, 'a') })
    await vi.advanceTimersByTimeAsync(2_000)
    expect((await pending).error).toEqual({ code: 'TIMEOUT', message: 'tool call timed out' })
  })

  it('a timer that fires after the body finished changes nothing', async () => {
    vi.useFakeTimers()
    const root = await mountTools()
    root.tools.register(echoTool('fast', () => 'done', { timeoutMs: 10 }))
    const result = await root.tools.execute(call('fast'), { agent: fakeAgent(root, 'a') })
    await vi.advanceTimersByTimeAsync(100)
    expect(result.error).toBeUndefined()
    expect(vi.getTimerCount()).toBe(0)
  })
})
