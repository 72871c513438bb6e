import { Context } from 'cordis'
import { describe, expectTypeOf, it } from 'vitest'
import AgentSpine, { SpineConfig } from '@deepseek-ai/dsh-agent-spine'

describe('public types', () => {
  it('SpineConfig: every field optional on input, all filled on output, sub-objects typed by their owners', () => {
    expectTypeOf<SpineConfig.Input>().toMatchTypeOf<{ maxParallelToolCalls?: number; retry?: { baseDelayMs?: number; maxDelayMs?: number; budgets?: Record<string, number> } }>()
    expectTypeOf<SpineConfig['invariants']['policy']>().toEqualTypeOf<'throw' | 'log' | 'collect' | undefined>()
    expectTypeOf<SpineConfig['agents'][number]['id']>().toEqualTypeOf<string>()
    // @ts-expect-error: a policy that does not exist
    SpineConfig({ invariants: { policy: 'panic' } })
  })

  it('the bundle mounts with its config (the workspace tools are dsh-workspace-tools, typed there)', () => {
    const ctx = new Context()
    ctx.plugin(AgentSpine, { defaultModel: { provider: 'scripted', model: 'demo' } })
  })
})
