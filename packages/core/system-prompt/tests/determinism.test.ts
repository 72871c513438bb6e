import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Tools from '@deepseek-ai/dsh-tools'
import SystemPrompt, { type PromptSection } from '@deepseek-ai/dsh-system-prompt'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'
import { fakeAgent, vars } from './helpers'

function tool(name: string, description = `the ${name} tool`): ToolDefinition {
  return { name, description, parameters: { type: 'object', properties: { path: { type: 'string' } } }, execute: () => 'ok' }
}

async function mountSpine() {
  const root = new Context()
  await root.plugin(Tools)
  await root.plugin(SystemPrompt, { identity: 'IDENTITY', persona: 'PERSONA' })
  return root
}

/** The exact bytes a provider would receive for the prefix. */
async function bytes(root: Context, agentId = 'a') {
  return JSON.stringify(await root.systemPrompt.assembleContextFor(fakeAgent(root, agentId), vars))
}

describe('deterministic assembly (R-SP-1)', () => {
  it('tools come from ctx.tools.schemas(agent), sorted by name; agent-local ones only for their agent', async () => {
    const root = await mountSpine()
    root.tools.register(tool('write_file'))
    root.tools.register(tool('read_file'))
    fakeAgent(root, 'a').ctx.tools.register(tool('review'))
    const forA = await root.systemPrompt.assembleContextFor(fakeAgent(root, 'a'), vars)
    const forB = await root.systemPrompt.assembleContextFor(fakeAgent(root, 'b'), vars)
    expect(forA.tools.map((t) => t.name)).toEqual(['read_file', 'review', 'write_file'])
    expect(forB.tools.map((t) => t.name)).toEqual(['read_file', 'write_file'])
    expect(forA.tools[0]).toEqual({ name: 'read_file', description: 'the read_file tool', parameters: { type: 'object', properties: { path: { type: 'string' } } } })
  })

  it('without the tools service mounted, the tool list is empty', async () => {
    const root = new Context()
    await root.plugin(SystemPrompt)
    expect((await root.systemPrompt.assembleContextFor(fakeAgent(root, 'a'), vars)).tools).toEqual([])
  })

  it('renders byte-identical output twice across a dispose and re-plug of an unrelated plugin', async () => {
    const root = await mountSpine()
    root.tools.register(tool('read_file'))
    root.systemPrompt.section({ name: 'rules', order: 200, text: 'Rule.' })
    // Unrelated to agent a, but it touches both registries, so a's prompt is rendered afresh after it.
    const unrelated = {
      inject: ['systemPrompt', 'tools'],
      apply: (ctx: Context) => {
        ctx.on('tools/result', () => {})
        const b = fakeAgent(ctx, 'b')
        b.ctx.systemPrompt.section({ name: 'b-only', order: 50, text: 'For b.' })
        b.ctx.tools.register(tool('b_tool'))
      },
    }
    const fiber = root.plugin(unrelated)
    await fiber
    const before = await bytes(root)
    await fiber.dispose()
    await root.plugin(unrelated)
    expect(await bytes(root)).toBe(before)
  })

  it('is independent of registration order', async () => {
    const sections: PromptSection[] = [
      { name: 'zeta', order: 300, text: 'Z' },
      { name: 'alpha', order: 300, text: 'A' },
      { name: 'first', order: 150, render: (v) => `model=${v.model}` },
    ]
    const one = await mountSpine()
    const two = await mountSpine()
    for (const s of sections) one.systemPrompt.section(s)
    for (const t of ['c', 'a', 'b']) one.tools.register(tool(t))
    for (const s of [...sections].reverse()) two.systemPrompt.section(s)
    for (const t of ['b', 'c', 'a']) two.tools.register(tool(t))
    expect(await bytes(two)).toBe(await bytes(one))
  })

  it("hot replacement of a section's plugin: the same plugin re-plugged gives the same bytes; a changed one replaces its text exactly once", async () => {
    const root = await mountSpine()
    let text = 'Guide v1.'
    const plugin = {
      inject: ['systemPrompt', 'tools'],
      apply: (ctx: Context) => {
        ctx.systemPrompt.section({ name: 'guide', order: 400, text })
        ctx.tools.register(tool('grep', `grep (${text})`))
      },
    }
    let fiber = root.plugin(plugin)
    await fiber
    const before = await bytes(root)
    await fiber.dispose()
    fiber = root.plugin(plugin)
    await fiber
    expect(await bytes(root)).toBe(before)

    text = 'Guide v2.'
    await fiber.dispose()
    fiber = root.plugin(plugin)
    await fiber
    const after = await root.systemPrompt.assembleContextFor(fakeAgent(root, 'a'), vars)
    expect(after.system.split('\n\n')).toEqual([
      'IDENTITY',
      'PERSONA',
      'Guide v2.',
      'Environment:\n- Working directory: /work/project\n- Model: demo (scripted)',
    ])
    expect(after.tools.map((t) => t.description)).toEqual(['grep (Guide v2.)'])
  })

  it('the assembled context is frozen', async () => {
    const root = await mountSpine()
    root.tools.register(tool('read_file'))
    const assembled = await root.systemPrompt.assembleContextFor(fakeAgent(root, 'a'), vars)
    expect(Object.isFrozen(assembled)).toBe(true)
    expect(Object.isFrozen(assembled.tools)).toBe(true)
    expect(Object.isFrozen(assembled.tools[0])).toBe(true)
  })
})
