import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Tools from '@deepseek-ai/dsh-tools'
import type { SystemPromptChange } from '@deepseek-ai/dsh-system-prompt'
import { fakeAgent, mountPrompt, vars } from './helpers'

function recorder(seen: string[], who: string) {
  return (change: SystemPromptChange) => void seen.push(`${who}:${change.reason}:${change.name ?? '-'}:${change.agentId ?? '*'}`)
}

describe('system-prompt/change', () => {
  it('announces section additions and removals, scope-filtered by the agent of a local section', async () => {
    const { root } = await mountPrompt()
    const a = fakeAgent(root, 'a')
    const b = fakeAgent(root, 'b')
    const seen: string[] = []
    root.on('system-prompt/change', recorder(seen, 'global'))
    a.ctx.on('system-prompt/change', recorder(seen, 'a'))
    b.ctx.on('system-prompt/change', recorder(seen, 'b'))
    const removeLocal = a.ctx.systemPrompt.section({ name: 'role', order: 1, text: 'x' })
    const removeGlobal = root.systemPrompt.section({ name: 'rules', order: 1, text: 'y' })
    removeLocal()
    removeGlobal()
    expect(seen).toEqual([
      'global:section:role:a',
      'a:section:role:a',
      'global:section:rules:*',
      'a:section:rules:*',
      'b:section:rules:*',
      'global:section:role:a',
      'a:section:role:a',
      'global:section:rules:*',
      'a:section:rules:*',
      'b:section:rules:*',
    ])
  })

  it('a removal already shadowed by a newer section of the same name and scope is not announced', async () => {
    const { root } = await mountPrompt()
    const seen: string[] = []
    root.on('system-prompt/change', recorder(seen, 'g'))
    const removeOld = root.systemPrompt.section({ name: 'rules', order: 1, text: 'old' })
    root.systemPrompt.section({ name: 'rules', order: 1, text: 'new' })
    removeOld()
    expect(seen).toEqual(['g:section:rules:*', 'g:section:rules:*'])
  })

  it('a config update is applied in place: announced once, without restarting dependent plugins', async () => {
    const { root, fiber } = await mountPrompt()
    const seen: string[] = []
    let applied = 0
    await root.plugin({
      inject: ['systemPrompt'],
      apply: (ctx: Context) => {
        applied++
        ctx.systemPrompt.section({ name: 'dependent', order: 500, text: 'Still here.' })
      },
    })
    root.on('system-prompt/change', recorder(seen, 'g'))
    await fiber.update({ identity: 'IDENTITY', persona: 'New persona.' })
    await fiber.update({ identity: 'IDENTITY', persona: 'New persona.' })
    expect(seen).toEqual(['g:config:-:*'])
    expect(applied).toBe(1)
    expect(root.systemPrompt.config).toEqual({ identity: 'IDENTITY', persona: 'New persona.' })
    const { system } = await root.systemPrompt.assembleContextFor(fakeAgent(root, 'a'), { provider: '', model: '' })
    expect(system).toBe('IDENTITY\n\nNew persona.\n\nStill here.')
  })

  it('forwards tools/change, keeping its scope, and announces the tools service coming and going', async () => {
    const { root } = await mountPrompt()
    const a = fakeAgent(root, 'a')
    const b = fakeAgent(root, 'b')
    const seen: string[] = []
    root.on('system-prompt/change', recorder(seen, 'global'))
    b.ctx.on('system-prompt/change', recorder(seen, 'b'))
    const tools = root.plugin(Tools)
    await tools
    expect(seen).toEqual(['global:tools:-:*', 'b:tools:-:*'])
    seen.length = 0
    a.ctx.tools.register({ name: 'mine', description: '', parameters: {}, execute: () => '' })
    root.tools.register({ name: 'shared', description: '', parameters: {}, execute: () => '' })
    expect(seen).toEqual(['global:tools:mine:a', 'global:tools:shared:*', 'b:tools:shared:*'])
    seen.length = 0
    await tools.dispose()
    expect(seen).toEqual(['global:tools:-:*', 'b:tools:-:*'])
    expect((await root.systemPrompt.assembleContextFor(a, vars)).tools).toEqual([])
  })

  it('contains listener failures', async () => {
    const { root } = await mountPrompt()
    const seen: string[] = []
    root.on('system-prompt/change', () => {
      throw new Error('ui bug')
    })
    root.on('system-prompt/change', recorder(seen, 'g'))
    expect(() => root.systemPrompt.section({ name: 'x', order: 1, text: 'x' })).not.toThrow()
    expect(seen).toEqual(['g:section:x:*'])
  })
})
