import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Tools from '@deepseek-ai/dsh-tools'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import { fakeAgent, vars } from './helpers'

/** A spine whose one rendered section counts its renders. */
async function counted() {
  const root = new Context()
  await root.plugin(Tools)
  const fiber = root.plugin(SystemPrompt, { identity: 'I', persona: 'P' })
  await fiber
  let renders = 0
  root.systemPrompt.section({ name: 'counted', order: 500, render: (v) => (renders++, `model=${v.model}`) })
  const agent = fakeAgent(root, 'a')
  return { root, fiber, agent, renders: () => renders }
}

describe('per-step render cache', () => {
  it('does not re-render when nothing it depends on changed, and returns the same frozen object', async () => {
    const { root, agent, renders } = await counted()
    const first = await root.systemPrompt.assembleContextFor(agent, vars)
    const second = await root.systemPrompt.assembleContextFor(agent, vars)
    const third = await root.systemPrompt.assembleContextFor(agent, { ...vars })
    expect(renders()).toBe(1)
    expect(second).toBe(first)
    expect(third).toBe(first)
  })

  it('re-renders when a variable changes, and again when it changes back', async () => {
    const { root, agent, renders } = await counted()
    await root.systemPrompt.assembleContextFor(agent, vars)
    const other = await root.systemPrompt.assembleContextFor(agent, { ...vars, model: 'other' })
    expect(other.system).toContain('model=other')
    await root.systemPrompt.assembleContextFor(agent, vars)
    expect(renders()).toBe(3)
  })

  it('re-renders after a section, tool or config change', async () => {
    const { root, fiber, agent, renders } = await counted()
    await root.systemPrompt.assembleContextFor(agent, vars)
    root.systemPrompt.section({ name: 'new', order: 1, text: 'N' })
    await root.systemPrompt.assembleContextFor(agent, vars)
    root.tools.register({ name: 'read', description: '', parameters: {}, execute: () => '' })
    const withTool = await root.systemPrompt.assembleContextFor(agent, vars)
    expect(withTool.tools.map((t) => t.name)).toEqual(['read'])
    await fiber.update({ identity: 'I2', persona: 'P' })
    const reconfigured = await root.systemPrompt.assembleContextFor(agent, vars)
    expect(reconfigured.system.startsWith('I2\n\n')).toBe(true)
    expect(renders()).toBe(4)
  })

  it('keeps one cache entry per agent', async () => {
    const { root, renders } = await counted()
    const a = fakeAgent(root, 'a')
    const b = fakeAgent(root, 'b')
    await root.systemPrompt.assembleContextFor(a, vars)
    await root.systemPrompt.assembleContextFor(b, vars)
    await root.systemPrompt.assembleContextFor(a, vars)
    await root.systemPrompt.assembleContextFor(b, vars)
    expect(renders()).toBe(2)
  })
})
