import { Context } from 'cordis'
import { describe, expectTypeOf, it } from 'vitest'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { SessionEventMap } from '@deepseek-ai/dsh-session'
import type { ToolErrorCode } from '@deepseek-ai/dsh-tools'
import Permissions, {
  type PermissionDecisionRecord,
  type PermissionMode,
  type PermissionRule,
  type PermissionVerdict,
  type PermissionsErrorCode,
  type PermissionsOptions,
  type WorkspaceSettingsStatus,
} from '@deepseek-ai/dsh-permissions'

declare const ctx: Context
declare const agent: Agent

describe('dsh-permissions public types', () => {
  it('ctx.permissions is the service, with typed modes', () => {
    expectTypeOf(ctx.permissions).toEqualTypeOf<Permissions>()
    expectTypeOf(ctx.permissions.mode(agent)).toEqualTypeOf<PermissionMode>()
    expectTypeOf<PermissionMode>().toEqualTypeOf<'plan' | 'default' | 'accept-edits' | 'bypass'>()
    // @ts-expect-error not a mode
    ctx.permissions.setMode(agent, 'yolo')
    expectTypeOf(ctx.permissions.workspaceSettings()).toEqualTypeOf<WorkspaceSettingsStatus | undefined>()
    expectTypeOf(ctx.permissions.decide).returns.resolves.toEqualTypeOf<PermissionVerdict>()
  })

  it('rules and options', () => {
    const rule: PermissionRule = { tool: 'shell', match: { command: 'git status' }, decision: 'allow' }
    // @ts-expect-error the decision is allow, ask or deny
    const wrong: PermissionRule = { tool: 'shell', decision: 'maybe' }
    const options: PermissionsOptions = { mode: 'plan', rules: [rule], userDirectory: false }
    void [wrong, options]
  })

  it('merges its session events and error codes', () => {
    expectTypeOf<SessionEventMap['permission/decision']>().toEqualTypeOf<PermissionDecisionRecord>()
    expectTypeOf<SessionEventMap['permission/mode']['mode']>().toEqualTypeOf<PermissionMode>()
    expectTypeOf<'NOT_IN_PLAN_MODE' | 'PLAN_NOT_APPROVED'>().toMatchTypeOf<ToolErrorCode>()
    expectTypeOf<'BYPASS_NOT_ALLOWED'>().toMatchTypeOf<PermissionsErrorCode>()
  })
})
