import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Tools from '@deepseek-ai/dsh-tools'
import SystemPrompt, { type AssembledContext } from '@deepseek-ai/dsh-system-prompt'
import { fakeAgent, vars } from './helpers'

async function mountSpine() {
  const root = new Context()
  await root.plugin(Tools)
  await root.plugin(SystemPrompt, { identity: 'I', persona: '' })
  root.tools.register({ name: 'read', description: 'Read.', parameters: { type: 'object' }, execute: () => '' })
  root.tools.register({ name: 'write', description: 'Write.', parameters: { type: 'object' }, execute: () => '' })
  return root
}

const noEnv = { provider: '', model: '' }

describe('system-prompt/assemble', () => {
  it('listeners may rewrite the system text and the tool list; the result keeps only { system, tools }, frozen', async () => {
    const root = await mountSpine()
    root.on('system-prompt/assemble', async (_agent, v, next) => {
      const inner = await next()
      return {
        system: `${inner.system}\n\nPlan mode for ${v.model}.`,
        tools: inner.tools.filter((t) => t.name !== 'write'),
        messages: ['not allowed here'],
      } as AssembledContext
    })
    const assembled = await root.systemPrompt.assembleContextFor(fakeAgent(root, 'a'), { ...noEnv, model: 'm' })
    expect(assembled).toEqual({ system: 'I\n\nEnvironment:\n- Model: m\n\nPlan mode for m.', tools: [{ name: 'read', description: 'Read.', parameters: { type: 'object' } }] })
    expect(Object.isFrozen(assembled)).toBe(true)
    expect(Object.isFrozen(assembled.tools)).toBe(true)
  })

  it('runs on every call, even when the render is cached', async () => {
    const root = await mountSpine()
    let calls = 0
    root.on('system-prompt/assemble', async (_agent, _vars, next) => (calls++, next()))
    const agent = fakeAgent(root, 'a')
    await root.systemPrompt.assembleContextFor(agent, noEnv)
    await root.systemPrompt.assembleContextFor(agent, noEnv)
    expect(calls).toBe(2)
  })

  it('is scope-filtered: an agent-local listener changes only its agent', async () => {
    const root = await mountSpine()
    const a = fakeAgent(root, 'a')
    const b = fakeAgent(root, 'b')
    a.ctx.on('system-prompt/assemble', async (agent, _vars, next) => {
      const inner = await next()
      return { ...inner, system: `${inner.system}\n\nOnly for ${agent.id}.` }
    })
    expect((await root.systemPrompt.assembleContextFor(a, noEnv)).system).toBe('I\n\nOnly for a.')
    expect((await root.systemPrompt.assembleContextFor(b, noEnv)).system).toBe('I')
  })

  it('passes the checked variables to listeners', async () => {
    const root = await mountSpine()
    let seen: unknown
    root.on('system-prompt/assemble', async (_agent, v, next) => ((seen = v), next()))
    await root.systemPrompt.assembleContextFor(fakeAgent(root, 'a'), { provider: 'p', model: 'm', cwd: undefined, branch: 'main' })
    expect(seen).toEqual({ branch: 'main', model: 'm', provider: 'p' })
    expect(Object.isFrozen(seen)).toBe(true)
  })

  it('rejects a malformed result with INVALID_ASSEMBLY, and a throwing listener with its own error', async () => {
    const root = await mountSpine()
    const agent = fakeAgent(root, 'a')
    let listener: () => unknown = async () => ({ system: 1, tools: [] })
    root.on('system-prompt/assemble', () => listener() as never)
    await expect(root.systemPrompt.assembleContextFor(agent, noEnv)).rejects.toMatchObject({ code: 'INVALID_ASSEMBLY' })
    listener = async () => ({ system: 'x', tools: [{ name: 'half' }] })
    await expect(root.systemPrompt.assembleContextFor(agent, noEnv)).rejects.toMatchObject({
      code: 'INVALID_ASSEMBLY',
      message: 'a system-prompt/assemble listener returned an invalid tool schema at tools[0]',
    })
    listener = () => {
      throw new Error('policy crashed')
    }
    await expect(root.systemPrompt.assembleContextFor(agent, noEnv)).rejects.toThrow('policy crashed')
  })

  it('contextFor returns the assembled context itself when nobody listens, a promise of the same when someone does, and throws a bad variable', async () => {
    const root = await mountSpine()
    const agent = fakeAgent(root, 'a')
    const direct = root.systemPrompt.contextFor(agent, { ...noEnv, model: 'm' })
    expect(direct).not.toBeInstanceOf(Promise)
    expect(direct).toBe(await root.systemPrompt.assembleContextFor(agent, { ...noEnv, model: 'm' }))
    expect(() => root.systemPrompt.contextFor(agent, { model: 'm' } as never)).toThrow(expect.objectContaining({ code: 'INVALID_VARS' }))
    root.on('system-prompt/assemble', async (_agent, _vars, next) => {
      const inner = await next()
      return { system: `${inner.system} (listened)`, tools: inner.tools }
    })
    const heard = root.systemPrompt.contextFor(agent, { ...noEnv, model: 'm' })
    expect(heard).toBeInstanceOf(Promise)
    expect(await heard).toEqual({ system: `${(direct as AssembledContext).system} (listened)`, tools: (direct as AssembledContext).tools })
  })
})
