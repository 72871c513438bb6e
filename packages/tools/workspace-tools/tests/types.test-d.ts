import { Context } from 'cordis'
import { describe, expectTypeOf, it } from 'vitest'
import type { ToolErrorCode, ToolInvocation } from '@deepseek-ai/dsh-tools'
import WorkspaceTools, { type SandboxStatus, type WorkspaceToolName } from '@deepseek-ai/dsh-workspace-tools'

declare const ctx: Context

describe('dsh-workspace-tools typings', () => {
  it('the plugin takes a root and optional settings; ctx.workspaceTools is the service', () => {
    ctx.plugin(WorkspaceTools, { root: '.' })
    ctx.plugin(WorkspaceTools, { root: '.', askBefore: [], exclude: ['shell'], shell: { sandbox: 'off' } })
    // @ts-expect-error the root is required
    ctx.plugin(WorkspaceTools, {})
    // @ts-expect-error only write and execute can be asked about
    ctx.plugin(WorkspaceTools, { root: '.', askBefore: ['read'] })
    expectTypeOf(ctx.workspaceTools.sandbox).toEqualTypeOf<SandboxStatus>()
    expectTypeOf(ctx.workspaceTools.describe).parameters.toEqualTypeOf<[Pick<ToolInvocation, 'tool' | 'args'>]>()
    expectTypeOf(ctx.workspaceTools.contains).returns.toEqualTypeOf<Promise<boolean>>()
  })

  it('its refusal codes extend the tools vocabulary', () => {
    expectTypeOf<'OUTSIDE_WORKSPACE' | 'NOT_A_REGULAR_FILE' | 'STALE_FILE' | 'AMBIGUOUS_MATCH' | 'INVALID_PATTERN'>().toExtend<ToolErrorCode>()
    expectTypeOf<'read_file' | 'shell'>().toExtend<WorkspaceToolName>()
  })
})
