import { describe, expect, it } from 'vitest'
import type { ToolCallResult } from '@deepseek-ai/dsh-tools'
import { call, deferred, echoTool, fakeAgent, mountTools, resultText } from './helpers'

describe('the staged pipeline (plan → run → finish, R-TOOL-3)', () => {
  it('policy is over when the plan resolves, the body runs in run(), and post-execute and tools/result wait for finish()', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    const log: string[] = []
    const body = deferred<string>()
    root.tools.register(echoTool('slow', async () => {
      log.push('body starts')
      return body.promise
    }))
    root.on('tools/pre-execute', async (_invocation, next) => {
      log.push('pre-execute')
      return next()
    })
    root.on('tools/post-execute', async (_invocation, _output, next) => {
      log.push('post-execute')
      return next()
    })
    root.on('tools/result', () => void log.push('tools/result'))
    const plan = await root.tools.plan(call('slow'), { agent })
    expect(log).toEqual(['pre-execute'])
    const running = plan.run()
    await Promise.resolve()
    expect(log).toEqual(['pre-execute', 'body starts'])
    body.resolve('done')
    await running
    expect(log).toEqual(['pre-execute', 'body starts'])
    const result = await plan.finish()
    expect(log).toEqual(['pre-execute', 'body starts', 'post-execute', 'tools/result'])
    expect(resultText(result)).toEqual({ text: 'done', isError: false })
  })

  it('a call refused by policy never runs: run() is a no-op and finish() gives the refusal', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    let ran = false
    root.tools.register(echoTool('guarded', () => ((ran = true), 'x')))
    root.tools.guard(() => ({ kind: 'deny', reason: 'not today' }))
    const plan = await root.tools.plan(call('guarded'), { agent })
    await plan.run()
    const result = await plan.finish()
    expect(ran).toBe(false)
    expect(result.error).toEqual({ code: 'DENIED', message: 'tool call denied: not today' })
  })

  it('finish() without run() gives up on the call: ABORTED_BEFORE_DISPATCH, still announced on tools/result', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    let ran = false
    root.tools.register(echoTool('never', () => ((ran = true), 'x')))
    const seen: string[] = []
    root.on('tools/result', (_agent, _call, result) => void seen.push(result.error?.code ?? 'ok'))
    const plan = await root.tools.plan(call('never'), { agent })
    const result = await plan.finish()
    expect(ran).toBe(false)
    expect(result.error?.code).toBe('ABORTED_BEFORE_DISPATCH')
    expect(resultText(result)).toEqual({ text: 'Error: tool call aborted before dispatch', isError: true })
    expect(seen).toEqual(['ABORTED_BEFORE_DISPATCH'])
  })

  it('a signal that aborts between the plan and run() keeps the body from starting', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    let ran = false
    root.tools.register(echoTool('late', () => ((ran = true), 'x')))
    const controller = new AbortController()
    const plan = await root.tools.plan(call('late'), { agent, signal: controller.signal })
    controller.abort()
    await plan.run()
    expect(ran).toBe(false)
    expect((await plan.finish()).error?.code).toBe('ABORTED_BEFORE_DISPATCH')
  })

  it('stage(): a stage with nothing to wait for returns no promise, and classification and the body share one parse', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    let validations = 0
    const seen: unknown[] = []
    root.tools.register(
      echoTool('count', (args) => (seen.push(args), 'done'), {
        validate: (args) => (validations++, { ...(args as object) }),
        isConcurrencySafe: (args) => (seen.push(args), true),
      }),
    )
    const stage = root.tools.stage(call('count', { n: 1 }), { agent })
    expect(stage.isConcurrencySafe()).toBe(true)
    expect(stage.admit()).toBeUndefined()
    expect(stage.run()).toBeUndefined()
    const result = stage.finish() as ToolCallResult
    expect(resultText(result)).toEqual({ text: 'done', isError: false })
    expect(validations).toBe(1)
    expect(seen).toEqual([{ n: 1 }, { n: 1 }])
    expect(seen[0]).toBe(seen[1])
  })

  it('stage(): a registration that changes between classification and admit() is looked up again, and its own validator parses the arguments', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    const validated: string[] = []
    const ran: string[] = []
    const tool = (version: string) =>
      echoTool('swap', () => (ran.push(version), version), {
        validate: (args) => (validated.push(version), { ...(args as object), version }),
        isConcurrencySafe: () => true,
      })
    const dispose = root.tools.register(tool('old'))
    const stage = root.tools.stage(call('swap', { n: 1 }), { agent })
    expect(stage.isConcurrencySafe()).toBe(true)
    dispose()
    root.tools.register(tool('new'))
    expect(stage.admit()).toBeUndefined()
    expect(stage.run()).toBeUndefined()
    expect(resultText(stage.finish() as ToolCallResult)).toEqual({ text: 'new', isError: false })
    expect({ validated, ran }).toEqual({ validated: ['old', 'new'], ran: ['new'] })
  })

  it('stage(): a tool unregistered between classification and admit() is UNKNOWN_TOOL, and its body never runs', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    let ran = false
    const dispose = root.tools.register(echoTool('gone', () => ((ran = true), 'x'), { isConcurrencySafe: () => true }))
    const stage = root.tools.stage(call('gone'), { agent })
    expect(stage.isConcurrencySafe()).toBe(true)
    dispose()
    expect(stage.admit()).toBeUndefined()
    expect(stage.run()).toBeUndefined()
    expect(ran).toBe(false)
    expect((stage.finish() as ToolCallResult).error).toEqual({ code: 'UNKNOWN_TOOL', message: 'unknown tool "gone"' })
  })

  it('stage(): a heard listener or a body promise makes that stage return a promise, with the same decisions', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    const body = deferred<string>()
    root.tools.register(echoTool('slow', () => body.promise))
    root.on('tools/pre-execute', async (_invocation, next) => next())
    const stage = root.tools.stage(call('slow'), { agent })
    const admitted = stage.admit()
    expect(admitted).toBeInstanceOf(Promise)
    await admitted
    const running = stage.run()
    expect(running).toBeInstanceOf(Promise)
    body.resolve('late')
    await running
    expect(resultText(await stage.finish())).toEqual({ text: 'late', isError: false })
  })
})
