import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import AgentSpine, { SPINE_PACKAGES, SpineConfig } from '@deepseek-ai/dsh-agent-spine'
import { DEFAULT_IDENTITY, DEFAULT_PERSONA } from '@deepseek-ai/dsh-system-prompt'
import { DEFAULT_BUDGETS } from '@deepseek-ai/dsh-llm-retry'
import ScriptedPlugin from '@deepseek-ai/dsh-llm-scripted'
import { SessionId } from '@deepseek-ai/dsh-session'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { trace } from './helpers'

async function mount(config: SpineConfig.Input = {}) {
  const root = new Context()
  const spine = root.plugin(AgentSpine, config)
  await spine
  return { root, spine }
}

describe('the spine bundle', () => {
  it('mounts every spine service and nothing the application chooses (adapters, persistence, tools)', async () => {
    const { root, spine } = await mount()
    const services = ['llm', 'sessions', 'systemPrompt', 'tools', 'agents', 'agentDefaultModel', 'llmRetry', 'invariants', 'agentLoop'] as const
    expect(services.filter((name) => root.get(name) === undefined)).toEqual([])
    expect(root.get('sessionPersistence')).toBeUndefined()
    expect(root.get('approval')).toBeUndefined()
    expect(root.tools.schemas()).toEqual([])
    expect(SPINE_PACKAGES).toEqual([
      '@deepseek-ai/dsh-llm',
      '@deepseek-ai/dsh-session',
      '@deepseek-ai/dsh-system-prompt',
      '@deepseek-ai/dsh-tools',
      '@deepseek-ai/dsh-agent',
      '@deepseek-ai/dsh-agent-default-model',
      '@deepseek-ai/dsh-llm-retry',
      '@deepseek-ai/dsh-invariants',
      '@deepseek-ai/dsh-session/invariant',
      '@deepseek-ai/dsh-agent/invariant',
      '@deepseek-ai/dsh-agent-loop/invariant',
      '@deepseek-ai/dsh-agent-loop',
    ])
    expect(root.invariants.names()).toEqual(['agent-loop/request-reconstruction', 'agent/registry-pairing', 'session/log-structure'])
    await spine.dispose()
    expect(services.filter((name) => root.get(name) !== undefined)).toEqual([])
  })

  it('fills every default through the owners’ schemas', () => {
    expect(SpineConfig({})).toEqual({
      maxParallelToolCalls: 10,
      durability: 'step',
      agents: [],
      systemPrompt: { identity: DEFAULT_IDENTITY, persona: DEFAULT_PERSONA },
      defaultModel: {},
      retry: { baseDelayMs: 500, maxDelayMs: 30_000, budgets: {} },
      invariants: { policy: 'log' },
    })
  })

  it('refuses a bad value naming its field', () => {
    expect(() => SpineConfig({ retry: { maxDelayMs: 'soon' as never } })).toThrow('$.retry.maxDelayMs expected number')
    expect(() => SpineConfig({ maxParallelToolCalls: 0 })).toThrow('$.maxParallelToolCalls expected number >= 1')
    expect(() => SpineConfig({ invariants: { policy: 'panic' as never } })).toThrow('$.invariants.policy')
  })

  it('forwards each sub-object to its owner', async () => {
    const { root, spine } = await mount({
      systemPrompt: { persona: 'Terse.' },
      defaultModel: { provider: 'scripted', model: 'demo' },
      retry: { budgets: { RATE_LIMIT: 9 } },
      invariants: { policy: 'collect' },
    })
    expect(root.systemPrompt.config).toEqual({ identity: DEFAULT_IDENTITY, persona: 'Terse.' })
    expect(root.agentDefaultModel.current()).toEqual({ provider: 'scripted', model: 'demo' })
    expect(root.llmRetry.budgets).toEqual({ ...DEFAULT_BUDGETS, RATE_LIMIT: 9 })
    expect(root.invariants.policy).toBe('collect')
    await spine.dispose()
  })

  it('starts the loop’s config agents', async () => {
    const { root, spine } = await mount({ agents: [{ id: 'helper', provider: 'scripted', model: 'demo' }] })
    await new Promise<void>((resolve) => {
      if (root.agents.list().length) return resolve()
      root.on('agent/created', () => resolve())
    })
    expect(root.agents.list().map((agent) => agent.id.replace(/-session-.*/, '-session-*'))).toEqual(['helper-session-*'])
    expect(root.agents.list()[0]!.options).toEqual({ provider: 'scripted', model: 'demo' })
    await spine.dispose()
  })

  // maxParallelToolCalls is visible in the log: a concurrency-safe call logs its tool/call when it starts,
  // so two safe calls that may overlap both start before the first result; a pool of 1 runs them in turn.
  it.each([
    [2, ['tool/call noop', 'tool/call noop', 'tool/result ok', 'tool/result ok']],
    [1, ['tool/call noop', 'tool/result ok', 'tool/call noop', 'tool/result ok']],
  ])('forwards maxParallelToolCalls = %i to the loop', async (maxParallelToolCalls, batch) => {
    const { root, spine } = await mount({ maxParallelToolCalls, defaultModel: { provider: 'scripted', model: 'demo' }, invariants: { policy: 'throw' } })
    const noop = defineTool({ name: 'noop', description: 'Does nothing.', parameters: z.object({}), isConcurrencySafe: () => true, execute: () => 'done' })
    root.tools.register(noop)
    await root.plugin(ScriptedPlugin, { script: [{ toolCalls: [{ name: 'noop' }, { name: 'noop' }], answer: 'Both done.' }] })
    const handle = await root.agents.create({ sessionId: SessionId(`parallel-${maxParallelToolCalls}`) })
    handle.agent.followup('go')
    await handle.agent.whenIdle()
    expect(trace(handle.agent.session.events)).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "go"',
      'assistant/chunk ×4',
      'assistant/message tool-calls calls noop,noop',
      ...batch,
      'step/end 1.1',
      'step/start 1.2',
      'assistant/chunk ×4',
      'assistant/message stop',
      'step/end 1.2',
      'turn/end 1 completed',
    ])
    // The invariant companions checked every request against the log (eagerly, under `throw`) and find nothing now.
    expect(await root.invariants.check()).toEqual([])
    expect(root.invariants.violations).toEqual([])
    await handle.dispose()
    await spine.dispose()
  })

  it.each([
    // 'step': after the admission, before the step's request, at the turn's end; 'turn': at the turn's end only.
    ['step', true],
    ['turn', false],
  ] as const)('forwards durability = %s to the loop', async (durability, flushesBeforeRequest) => {
    const { root, spine } = await mount({ durability, defaultModel: { provider: 'scripted', model: 'demo' } })
    const flushed: number[] = []
    root.on('session/flush', (session) => void flushed.push(session.events.length))
    await root.plugin(ScriptedPlugin, { script: ['Done.'] })
    const handle = await root.agents.create({ sessionId: SessionId(`durability-${durability}`) })
    handle.agent.followup('go')
    await handle.agent.whenIdle()
    const events = handle.agent.session.events
    const requestSent = events.findIndex((event) => event.type === 'request/header') + 1
    expect(flushed.some((length) => length <= requestSent)).toBe(flushesBeforeRequest)
    expect(flushed.at(-1)).toBe(events.length)
    await handle.dispose()
    await spine.dispose()
  })
})
