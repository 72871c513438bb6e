import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { call, echoTool, fakeAgent, mountTools } from './helpers'

describe('scope-filtered tools/* events', () => {
  it("a listener registered in an agent's scoped context sees only that agent's calls", async () => {
    const root = await mountTools()
    const a = fakeAgent(root, 'a')
    const b = fakeAgent(root, 'b')
    root.tools.register(echoTool('read'))
    const seen: string[] = []
    for (const [who, ctx] of [['global', root], ['a', a.ctx], ['b', b.ctx]] as const) {
      ctx.on('tools/pre-execute', async (invocation, next) => (seen.push(`${who}:pre:${invocation.agent.id}`), next()))
      ctx.on('tools/execute', async (dispatch, next) => (seen.push(`${who}:execute:${dispatch.agent.id}`), next()))
      ctx.on('tools/post-execute', async (invocation, _output, next) => (seen.push(`${who}:post:${invocation.agent.id}`), next()))
      ctx.on('tools/result', (agent) => void seen.push(`${who}:result:${agent.id}`))
    }
    await root.tools.execute(call('read'), { agent: a })
    await root.tools.execute(call('read'), { agent: b })
    expect(seen).toEqual([
      'global:pre:a',
      'a:pre:a',
      'global:execute:a',
      'a:execute:a',
      'global:post:a',
      'a:post:a',
      'global:result:a',
      'a:result:a',
      'global:pre:b',
      'b:pre:b',
      'global:execute:b',
      'b:execute:b',
      'global:post:b',
      'b:post:b',
      'global:result:b',
      'b:result:b',
    ])
  })

  it("an agent-local policy plugin denies that agent's calls only, until it is unloaded", async () => {
    const root = await mountTools()
    const a = fakeAgent(root, 'a')
    const b = fakeAgent(root, 'b')
    root.tools.register(echoTool('write'))
    const fiber = a.ctx.plugin({
      apply: (ctx: Context) => void ctx.on('tools/pre-execute', async () => ({ kind: 'deny', reason: 'plan mode' })),
    })
    await fiber
    expect((await root.tools.execute(call('write'), { agent: a })).error?.code).toBe('DENIED')
    expect((await root.tools.execute(call('write'), { agent: b })).error).toBeUndefined()
    await fiber.dispose()
    expect((await root.tools.execute(call('write'), { agent: a })).error).toBeUndefined()
  })

  it('an agent-local tool runs for its agent with run.agent set to that agent', async () => {
    const root = await mountTools()
    const a = fakeAgent(root, 'a')
    const ran: string[] = []
    a.ctx.tools.register(echoTool('mine', (_args, run) => (ran.push(run.agent.id), 'ok')))
    await root.tools.execute(call('mine'), { agent: a })
    expect(ran).toEqual(['a'])
  })
})
