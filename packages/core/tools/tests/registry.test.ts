import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import type { ToolChange } from '@deepseek-ai/dsh-tools'
import { echoTool, fakeAgent, mountTools } from './helpers'

describe('ctx.tools registry', () => {
  it('reverts a registration with the fiber that made it', async () => {
    const root = await mountTools()
    const fiber = root.plugin({ inject: ['tools'], apply: (ctx: Context) => void ctx.tools.register(echoTool('read')) })
    await fiber
    expect(root.tools.schemas().map((s) => s.name)).toEqual(['read'])
    await fiber.dispose()
    expect(root.tools.schemas()).toEqual([])
    expect(root.tools.definition('read')).toBeUndefined()
  })

  it('the returned disposer removes the tool early and is idempotent', async () => {
    const root = await mountTools()
    const remove = root.tools.register(echoTool('read'))
    remove()
    remove()
    expect(root.tools.schemas()).toEqual([])
  })

  it('agent-local tools are visible to their agent only, over global tools of the same name', async () => {
    const root = await mountTools()
    const a = fakeAgent(root, 'a')
    const b = fakeAgent(root, 'b')
    const globalRead = echoTool('read')
    const localRead = echoTool('read', () => 'local', { description: 'a-only read' })
    root.tools.register(globalRead)
    root.tools.register(echoTool('write'))
    a.ctx.tools.register(localRead)
    b.ctx.tools.register(echoTool('search'))

    expect(root.tools.definition('read', a)).toBe(localRead)
    expect(root.tools.definition('read', b)).toBe(globalRead)
    expect(root.tools.definition('search', a)).toBeUndefined()
    expect(root.tools.schemas().map((s) => s.name)).toEqual(['read', 'write'])
    expect(root.tools.schemas(a).map((s) => [s.name, s.description])).toEqual([
      ['read', 'a-only read'],
      ['write', 'the write tool'],
    ])
    expect(root.tools.schemas(b).map((s) => s.name)).toEqual(['read', 'search', 'write'])
  })

  it('schemas are exactly { name, description, parameters } in wire form, sorted by name, frozen and cached', async () => {
    const root = await mountTools()
    root.tools.register({
      ...echoTool('zeta'),
      // Not JSON as given: `undefined` has no wire form and is dropped.
      parameters: { type: 'object', properties: { when: { type: 'string', default: undefined } } } as never,
      timeoutMs: 5,
      isConcurrencySafe: () => true,
    })
    root.tools.register(echoTool('alpha'))
    const schemas = root.tools.schemas()
    expect(schemas).toEqual([
      { name: 'alpha', description: 'the alpha tool', parameters: { type: 'object', properties: {} } },
      { name: 'zeta', description: 'the zeta tool', parameters: { type: 'object', properties: { when: { type: 'string' } } } },
    ])
    expect(Object.isFrozen(schemas)).toBe(true)
    expect(Object.isFrozen(schemas[1]!.parameters)).toBe(true)
    expect(root.tools.schemas()).toBe(schemas)
    root.tools.register(echoTool('beta'))
    expect(root.tools.schemas()).not.toBe(schemas)
  })

  it('schemas are byte-stable across a reload of the registering plugin', async () => {
    const root = await mountTools()
    root.tools.register(echoTool('mid'))
    const plugin = {
      inject: ['tools'],
      apply: (ctx: Context) => {
        ctx.tools.register(echoTool('zz'))
        ctx.tools.register(echoTool('aa'))
      },
    }
    const fiber = root.plugin(plugin)
    await fiber
    const before = JSON.stringify(root.tools.schemas())
    await fiber.dispose()
    await root.plugin(plugin)
    expect(JSON.stringify(root.tools.schemas())).toBe(before)
  })

  it('refuses definitions that cannot be sent to a model or run, with INVALID_DEFINITION', async () => {
    const root = await mountTools()
    const cases: Array<[unknown, RegExp]> = [
      [{ ...echoTool('has space') }, /must match/],
      [{ ...echoTool('x'.repeat(65)) }, /must match/],
      [{ ...echoTool('ok'), description: 3 }, /string description/],
      [{ ...echoTool('ok'), execute: 'no' }, /execute function/],
      [{ ...echoTool('ok'), parameters: [] }, /JSON Schema object/],
      [{ ...echoTool('ok'), parameters: { type: 'object', n: 10n } }, /plain JSON/],
      [{ ...echoTool('ok'), timeoutMs: -5 }, /timeoutMs/],
      [{ ...echoTool('ok'), isConcurrencySafe: true }, /isConcurrencySafe must be a function/],
    ]
    for (const [definition, message] of cases) {
      expect(() => root.tools.register(definition as never)).toThrow(expect.objectContaining({ code: 'INVALID_DEFINITION', message: expect.stringMatching(message) }))
    }
    expect(root.tools.schemas()).toEqual([])
  })

  it('announces visible changes on tools/change, scope-filtered by the agent of a local registration', async () => {
    const root = await mountTools()
    const a = fakeAgent(root, 'a')
    const b = fakeAgent(root, 'b')
    const seen: string[] = []
    const show = (who: string) => (change: ToolChange) => void seen.push(`${who}:${change.kind}:${change.name}:${change.agentId ?? '*'}`)
    root.on('tools/change', show('global'))
    a.ctx.on('tools/change', show('a'))
    b.ctx.on('tools/change', show('b'))

    const removeGlobal = root.tools.register(echoTool('read'))
    const removeLocal = a.ctx.tools.register(echoTool('read'))
    removeLocal()
    removeGlobal()
    expect(seen).toEqual([
      'global:add:read:*',
      'a:add:read:*',
      'b:add:read:*',
      'global:add:read:a',
      'a:add:read:a',
      'global:remove:read:a',
      'a:remove:read:a',
      'global:remove:read:*',
      'a:remove:read:*',
      'b:remove:read:*',
    ])
  })

  it('a removal already shadowed by a newer registration of the same name and scope is not announced', async () => {
    const root = await mountTools()
    const seen: string[] = []
    root.on('tools/change', (change) => void seen.push(`${change.kind}:${change.name}`))
    const removeOld = root.tools.register(echoTool('read', () => 'old'))
    const removeNew = root.tools.register(echoTool('read', () => 'new'))
    removeOld()
    expect(seen).toEqual(['add:read', 'add:read'])
    removeNew()
    expect(seen).toEqual(['add:read', 'add:read', 'remove:read'])
  })

  it('a failing tools/change listener neither breaks the registration nor the other listeners', async () => {
    const root = await mountTools()
    const seen: string[] = []
    root.on('tools/change', () => {
      throw new Error('observer bug')
    })
    root.on('tools/change', (change) => void seen.push(change.name))
    root.tools.register(echoTool('read'))
    expect(seen).toEqual(['read'])
    expect(root.tools.schemas().map((s) => s.name)).toEqual(['read'])
  })

  it('hot replacement: re-plugging a changed tool plugin leaves exactly the new definition', async () => {
    const root = await mountTools()
    let version = 1
    const plugin = {
      inject: ['tools'],
      apply: (ctx: Context) => void ctx.tools.register(echoTool('read', () => `v${version}`, { description: `read v${version}` })),
    }
    let fiber = root.plugin(plugin)
    await fiber
    for (version = 2; version <= 4; version++) {
      await fiber.dispose()
      fiber = root.plugin(plugin)
      await fiber
    }
    expect(root.tools.schemas().map((s) => s.description)).toEqual(['read v4'])
  })
})
