import { Context } from 'cordis'
import { describe, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import type { Agent } from '@deepseek-ai/dsh-agent'
import {
  defineTool,
  effectOf,
  type ToolEffect,
  type PostExecuteDecision,
  type PreExecuteDecision,
  type ApprovalScope,
  type ToolApproval,
  type ToolCallResult,
  type ToolDefinition,
  type ToolDispatch,
  type ToolErrorCode,
  type ToolInvocation,
  type ToolOutput,
  type ToolRunContext,
} from '@deepseek-ai/dsh-tools'

// A plugin extends the tools vocabulary by declaration merging, without touching dsh-tools.
declare module '@deepseek-ai/dsh-tools' {
  interface ToolErrorCodeMap {
    SANDBOX_VIOLATION: true
  }
  interface ToolDefinition<Args> {
    /** A UI hint merged in by a display plugin. */
    displayName?: string
  }
}

declare const ctx: Context

describe('defineTool typings', () => {
  it('infers execute args from the zod schema (output side: defaults filled)', () => {
    const tool = defineTool({
      name: 'read',
      description: 'Read a file.',
      parameters: z.object({ path: z.string(), limit: z.number().optional(), mode: z.enum(['a', 'b']).default('a') }),
      execute(args, run) {
        expectTypeOf(args).toEqualTypeOf<{ path: string; limit?: number | undefined; mode: 'a' | 'b' }>()
        expectTypeOf(run).toEqualTypeOf<ToolRunContext>()
        return args.path
      },
      isConcurrencySafe: (args) => {
        expectTypeOf(args.path).toEqualTypeOf<string>()
        return true
      },
    })
    expectTypeOf(tool).toEqualTypeOf<ToolDefinition<{ path: string; limit?: number | undefined; mode: 'a' | 'b' }>>()
    ctx.tools.register(tool)
  })

  it('accepts strict and loose object schemas', () => {
    defineTool({ name: 's', description: '', parameters: z.strictObject({ a: z.string() }), execute: (args) => args.a })
    defineTool({ name: 'l', description: '', parameters: z.looseObject({ a: z.number() }), execute: (args) => String(args.a) })
  })

  it('rejects a body that misuses its arguments or returns a non-output', () => {
    defineTool({
      name: 'x',
      description: '',
      parameters: z.object({ n: z.number() }),
      // @ts-expect-error n is a number
      execute: (args) => args.n.toUpperCase(),
    })
    defineTool({
      name: 'x',
      description: '',
      parameters: z.object({}),
      // @ts-expect-error a tool returns text or content blocks
      execute: () => 42,
    })
  })

  it('takes an effect, one of the four', () => {
    const tool = defineTool({ name: 'r', description: '', parameters: z.object({}), effect: 'read', execute: () => '' })
    expectTypeOf(tool.effect).toEqualTypeOf<ToolEffect | undefined>()
    expectTypeOf(effectOf(tool)).toEqualTypeOf<ToolEffect>()
    expectTypeOf<ToolEffect>().toEqualTypeOf<'read' | 'write' | 'execute' | 'network'>()
    // @ts-expect-error not an effect
    defineTool({ name: 'r', description: '', parameters: z.object({}), effect: 'delete', execute: () => '' })
  })

  it('merged fields and codes type-check', () => {
    const tool: ToolDefinition = { name: 'x', description: '', parameters: {}, execute: () => '', displayName: 'X' }
    expectTypeOf(tool.displayName).toEqualTypeOf<string | undefined>()
    expectTypeOf<'SANDBOX_VIOLATION'>().toExtend<ToolErrorCode>()
  })
})

describe('tools event typings', () => {
  it('types the pipeline listeners', () => {
    ctx.on('tools/pre-execute', async (invocation, next) => {
      expectTypeOf(invocation).toEqualTypeOf<ToolInvocation>()
      expectTypeOf(invocation.agent).toEqualTypeOf<Agent>()
      const decision = await next()
      expectTypeOf(decision).toEqualTypeOf<PreExecuteDecision>()
      return invocation.call.name === 'rm' ? { kind: 'ask', reason: 'destructive' } : decision
    })
    ctx.on('tools/execute', async (dispatch, next) => {
      expectTypeOf(dispatch).toEqualTypeOf<ToolDispatch>()
      dispatch.signal = AbortSignal.any([dispatch.signal])
      const output = await next()
      expectTypeOf(output).toEqualTypeOf<ToolOutput>()
      return output
    })
    ctx.on('tools/post-execute', async (_invocation, output, next) => {
      expectTypeOf(await next()).toEqualTypeOf<PostExecuteDecision>()
      return typeof output === 'string' ? { kind: 'replace', output: output.trim() } : { kind: 'accept' }
    })
    ctx.on('tools/result', (agent, call, result) => {
      expectTypeOf(agent).toEqualTypeOf<Agent>()
      expectTypeOf(call.arguments).toEqualTypeOf<string>()
      expectTypeOf(result).toEqualTypeOf<ToolCallResult>()
    })
  })

  it('rejects decisions of the wrong shape', () => {
    // @ts-expect-error deny needs a reason
    ctx.on('tools/pre-execute', async () => ({ kind: 'deny' }))
    // @ts-expect-error post-execute cannot ask
    ctx.on('tools/post-execute', async () => ({ kind: 'ask' }))
    // @ts-expect-error a guard can only deny
    ctx.tools.guard(() => ({ kind: 'allow' }))
  })

  it('an approval plugin provides ctx.approval', () => {
    const approval: ToolApproval = { request: async (request) => (request.reason ? 'deny' : 'allow') }
    ctx.provide('approval', approval)
    expectTypeOf(ctx.get('approval')).toEqualTypeOf<ToolApproval | undefined>()
    // An answer in full: remember for the session within a scope, or deny with feedback for the model.
    const remembering: ToolApproval = { request: async (request) => ({ decision: 'allow', remember: request.scope ?? { tool: request.call.name } }) }
    const explaining: ToolApproval = { request: async () => ({ decision: 'deny', feedback: 'use pnpm, not npm' }) }
    // @ts-expect-error the decision is allow or deny
    const wrong: ToolApproval = { request: async () => ({ decision: 'ask' }) }
    ctx.on('tools/pre-execute', async () => ({ kind: 'ask', reason: 'writes', scope: { tool: 'edit_file', path: 'src/**' } }))
    ctx.on('tools/approval', (request, answer) => {
      expectTypeOf(request.scope).toEqualTypeOf<ApprovalScope | undefined>()
      expectTypeOf(answer.decision).toEqualTypeOf<'allow' | 'deny'>()
    })
    void [remembering, explaining, wrong]
  })
})
