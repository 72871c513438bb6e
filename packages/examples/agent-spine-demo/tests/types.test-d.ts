import { Context } from 'cordis'
import { describe, expectTypeOf, it } from 'vitest'
import AgentSpine, { SpineConfig, WorkspaceTools, workspaceTools, type Workspace, type WorkspaceToolSet } from '@deepseek-ai/dsh-agent-spine-demo'
import type { ToolDefinition, ToolErrorCode } from '@deepseek-ai/dsh-tools'

describe('public types', () => {
  it('SpineConfig: every field optional on input, all filled on output, sub-objects typed by their owners', () => {
    expectTypeOf<SpineConfig.Input>().toMatchTypeOf<{ maxParallelToolCalls?: number; retry?: { baseDelayMs?: number; maxDelayMs?: number; budgets?: Record<string, number> } }>()
    expectTypeOf<SpineConfig['invariants']['policy']>().toEqualTypeOf<'throw' | 'log' | 'collect' | undefined>()
    expectTypeOf<SpineConfig['agents'][number]['id']>().toEqualTypeOf<string>()
    // @ts-expect-error: a policy that does not exist
    SpineConfig({ invariants: { policy: 'panic' } })
  })

  it('the bundle and the tools plugin mount with their configs', () => {
    const ctx = new Context()
    ctx.plugin(AgentSpine, { defaultModel: { provider: 'scripted', model: 'demo' } })
    ctx.plugin(WorkspaceTools, { root: '.' })
  })

  it('the tool set is typed by each tool’s arguments', () => {
    expectTypeOf(workspaceTools).parameters.toEqualTypeOf<[Workspace]>()
    expectTypeOf<WorkspaceToolSet['writeFile']>().toEqualTypeOf<ToolDefinition<{ path: string; content: string }>>()
  })

  it('adds NOT_FOUND to the tool error codes', () => {
    expectTypeOf<'NOT_FOUND'>().toMatchTypeOf<ToolErrorCode>()
  })
})
