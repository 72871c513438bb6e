import { describe, expect, it } from 'vitest'
import { call, echoTool, fakeAgent, mountTools } from './helpers'

describe('isConcurrencySafe', () => {
  it('asks the definition with the validated arguments', async () => {
    const root = await mountTools()
    const seen: unknown[] = []
    root.tools.register(
      echoTool('shell', () => 'x', {
        validate: (args) => ({ ...(args as object), checked: true }),
        isConcurrencySafe: (args) => (seen.push(args), (args as { readOnly?: boolean }).readOnly === true),
      }),
    )
    expect(root.tools.isConcurrencySafe(call('shell', { readOnly: true }))).toBe(true)
    expect(root.tools.isConcurrencySafe(call('shell', { readOnly: false }))).toBe(false)
    expect(seen).toEqual([
      { readOnly: true, checked: true },
      { readOnly: false, checked: true },
    ])
  })

  it('is false for an unknown tool, invalid arguments, a missing method, a throw, or a non-true answer', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    root.tools.register(echoTool('plain'))
    root.tools.register(echoTool('safe', () => 'x', { isConcurrencySafe: () => true }))
    root.tools.register(
      echoTool('strict', () => 'x', {
        isConcurrencySafe: () => true,
        validate: () => {
          throw new Error('bad')
        },
      }),
    )
    root.tools.register(
      echoTool('throws', () => 'x', {
        isConcurrencySafe: () => {
          throw new Error('oops')
        },
      }),
    )
    root.tools.register(echoTool('truthy', () => 'x', { isConcurrencySafe: () => 1 as never }))
    expect(
      [call('nope'), call('plain'), call('safe'), call('safe', '{'), call('strict'), call('throws'), call('truthy')].map((c) =>
        root.tools.isConcurrencySafe(c, agent),
      ),
    ).toEqual([false, false, true, false, false, false, false])
  })

  it("resolves the calling agent's own definition", async () => {
    const root = await mountTools()
    const a = fakeAgent(root, 'a')
    root.tools.register(echoTool('read', () => 'x', { isConcurrencySafe: () => true }))
    a.ctx.tools.register(echoTool('read', () => 'x'))
    expect(root.tools.isConcurrencySafe(call('read'))).toBe(true)
    expect(root.tools.isConcurrencySafe(call('read'), a)).toBe(false)
  })
})
