import { Context } from 'cordis'
import { describe, expectTypeOf, it } from 'vitest'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { ToolSchema } from '@deepseek-ai/dsh-llm'
import type { AssembledContext, PromptVars, SystemPromptChange, SystemPromptErrorCode } from '@deepseek-ai/dsh-system-prompt'

declare module '@deepseek-ai/dsh-system-prompt' {
  interface SystemPromptErrorCodeMap {
    TEMPLATE_MISSING: true
  }
}

declare const ctx: Context
declare const agent: Agent

describe('system prompt typings', () => {
  it('types sections and the entry point', async () => {
    ctx.systemPrompt.section({ name: 'rules', order: 200, text: 'Rule.' })
    ctx.systemPrompt.section({
      name: 'branch',
      order: 900,
      render: (vars) => {
        expectTypeOf(vars).toEqualTypeOf<PromptVars>()
        expectTypeOf(vars.model).toEqualTypeOf<string>()
        expectTypeOf(vars.branch).toEqualTypeOf<string | undefined>()
        return vars.branch ? `Branch: ${vars.branch}` : ''
      },
    })
    // @ts-expect-error a section has text or render
    ctx.systemPrompt.section({ name: 'x', order: 1 })
    // @ts-expect-error the loop must supply provider and model
    void ctx.systemPrompt.assembleContextFor(agent, { cwd: '/' })
    const assembled = await ctx.systemPrompt.assembleContextFor(agent, { provider: 'p', model: 'm', cwd: '/w' })
    expectTypeOf(assembled).toEqualTypeOf<AssembledContext>()
    expectTypeOf(assembled.tools).toEqualTypeOf<readonly ToolSchema[]>()
  })

  it('types the events', () => {
    ctx.on('system-prompt/assemble', async (who, vars, next) => {
      expectTypeOf(who).toEqualTypeOf<Agent>()
      expectTypeOf(vars).toEqualTypeOf<PromptVars>()
      const inner = await next()
      return { ...inner, tools: inner.tools.filter((tool) => tool.name !== 'shell') }
    })
    // @ts-expect-error assemble listeners return { system, tools }
    ctx.on('system-prompt/assemble', async () => ({ system: 'x' }))
    ctx.on('system-prompt/change', (change) => {
      expectTypeOf(change).toEqualTypeOf<SystemPromptChange>()
      expectTypeOf(change.reason).toEqualTypeOf<'section' | 'config' | 'tools'>()
    })
  })

  it('merged error codes type-check', () => {
    expectTypeOf<'TEMPLATE_MISSING'>().toExtend<SystemPromptErrorCode>()
  })
})
