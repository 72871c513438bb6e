import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import DefaultModel from '@deepseek-ai/dsh-agent-default-model'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { LlmCallConfig } from '@deepseek-ai/dsh-llm'

async function mount(config?: { provider?: string; model?: string }) {
  const root = new Context()
  await root.plugin(DefaultModel, config)
  const request = (config: LlmCallConfig) =>
    root.waterfall('agent/request', {} as Agent, 1, 1, config, new AbortController().signal, async () => config)
  return { root, request }
}

describe('agent-default-model', () => {
  it('fills a missing provider/model pair through agent/request', async () => {
    const { request } = await mount({ provider: 'scripted', model: 'demo' })
    expect(await request({ reasoningEffort: 'low' })).toEqual({ provider: 'scripted', model: 'demo', reasoningEffort: 'low' })
  })

  it('leaves a complete config alone', async () => {
    const { request } = await mount({ provider: 'scripted', model: 'demo' })
    expect(await request({ provider: 'deepseek', model: 'deepseek-chat' })).toEqual({ provider: 'deepseek', model: 'deepseek-chat' })
  })

  it('completes only what agrees with the selection', async () => {
    const { request } = await mount({ provider: 'deepseek', model: 'deepseek-chat' })
    expect(await request({ provider: 'deepseek' })).toEqual({ provider: 'deepseek', model: 'deepseek-chat' })
    expect(await request({ provider: 'openai' })).toEqual({ provider: 'openai' })
    expect(await request({ model: 'deepseek-chat' })).toEqual({ provider: 'deepseek', model: 'deepseek-chat' })
    expect(await request({ model: 'gpt-4o' })).toEqual({ model: 'gpt-4o' })
  })

  it('refuses to start with half a selection in its config, saying which half is missing (a half selection would otherwise be dropped and every turn fail with NO_MODEL)', async () => {
    for (const [config, missing] of [[{ provider: 'openai' }, 'model'], [{ model: 'gpt-4o' }, 'provider'], [{ provider: 'openai', model: '' }, 'model']] as const) {
      const root = new Context()
      const failure = await Promise.resolve(root.plugin(DefaultModel, config)).then(() => undefined, (error: unknown) => error)
      expect(failure).toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringContaining(`no ${missing}`) })
      expect(root.get('agentDefaultModel')).toBeUndefined()
    }
  })

  it('with no selection it changes nothing', async () => {
    const { request } = await mount()
    expect(await request({})).toEqual({})
  })

  it('select() replaces the default at run time, announces it, and refuses half selections', async () => {
    const { root, request } = await mount()
    const seen: unknown[] = []
    root.on('agent-default-model/change', (selection) => void seen.push(selection))
    root.agentDefaultModel.select({ provider: 'scripted', model: 'demo' })
    expect(root.agentDefaultModel.current()).toEqual({ provider: 'scripted', model: 'demo' })
    expect(await request({})).toEqual({ provider: 'scripted', model: 'demo' })
    expect(() => root.agentDefaultModel.select({ provider: 'x', model: '' })).toThrow(/provider and model/)
    root.agentDefaultModel.select(undefined)
    expect(await request({})).toEqual({})
    expect(seen).toEqual([{ provider: 'scripted', model: 'demo' }, undefined])
  })

  it('stops filling once unloaded', async () => {
    const root = new Context()
    const fiber = root.plugin(DefaultModel, { provider: 'scripted', model: 'demo' })
    await fiber
    await fiber.dispose()
    const config = await root.waterfall('agent/request', {} as Agent, 1, 1, {}, new AbortController().signal, async () => ({}))
    expect(config).toEqual({})
  })
})
