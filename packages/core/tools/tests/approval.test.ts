import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import {
  MAX_FEEDBACK_CHARS,
  approvalAnswer,
  type ApprovalAnswer,
  type ApprovalRequest,
  type ApprovalResponse,
  type ToolApproval,
} from '@deepseek-ai/dsh-tools'
import { call, echoTool, fakeAgent, mountTools, resultText } from './helpers'

function provideApproval(root: Context, approval: ToolApproval) {
  return root.plugin({ apply: (ctx: Context) => void ctx.provide('approval', approval) })
}

/** A root with an `rm` tool whose calls ask (with a scope) and an approval service answering `answer()`. */
async function asking(answer: (request: ApprovalRequest) => ApprovalResponse | Promise<ApprovalResponse>) {
  const root = await mountTools()
  const agent = fakeAgent(root, 'a')
  const ran: string[] = []
  root.tools.register(echoTool('rm', (args) => (ran.push(JSON.stringify(args)), 'removed')))
  root.on('tools/pre-execute', async () => ({ kind: 'ask', reason: 'destructive', scope: { tool: 'rm', path: 'build/**' } }))
  const requests: ApprovalRequest[] = []
  await provideApproval(root, { request: async (request) => (requests.push(request), answer(request)) })
  const announced: { call: string; scope: unknown; answer: ApprovalAnswer }[] = []
  root.on('tools/approval', (request, answer) => void announced.push({ call: request.call.id, scope: request.scope, answer }))
  return { root, agent, ran, requests, announced }
}

describe('approval answers beyond allow/deny', () => {
  it('passes the ask decision’s scope to the approval service and announces the full answer as tools/approval', async () => {
    const { root, agent, ran, requests, announced } = await asking(() => ({ decision: 'allow', remember: { tool: 'rm', path: 'build/**' } }))
    const result = await root.tools.execute(call('rm', { path: 'build/a' }, 'c1'), { agent })
    expect(resultText(result)).toEqual({ text: 'removed', isError: false })
    expect(requests.map((r) => [r.reason, r.scope])).toEqual([['destructive', { tool: 'rm', path: 'build/**' }]])
    expect(announced).toEqual([{ call: 'c1', scope: { tool: 'rm', path: 'build/**' }, answer: { decision: 'allow', remember: { tool: 'rm', path: 'build/**' } } }])
    expect(ran).toEqual(['{"path":"build/a"}'])
  })

  it('a denial with feedback is the result the model reads, the feedback in it', async () => {
    const { root, agent, ran, announced } = await asking(() => ({ decision: 'deny', feedback: '  use `make clean` instead  ' }))
    const result = await root.tools.execute(call('rm', { path: 'build' }, 'c2'), { agent })
    expect(result.error).toEqual({ code: 'DENIED', message: 'tool call denied: not approved; the person said: use `make clean` instead' })
    expect(resultText(result)).toEqual({ text: 'Error: tool call denied: not approved; the person said: use `make clean` instead', isError: true })
    expect(announced.map((a) => a.answer)).toEqual([{ decision: 'deny', feedback: 'use `make clean` instead' }])
    expect(ran).toEqual([])
  })

  it('the plain words still work, and are announced in full form', async () => {
    let word: 'allow' | 'deny' = 'allow'
    const { root, agent, announced } = await asking(() => word)
    expect((await root.tools.execute(call('rm', {}, 'c1'), { agent })).error).toBeUndefined()
    word = 'deny'
    expect((await root.tools.execute(call('rm', {}, 'c2'), { agent })).error).toEqual({ code: 'DENIED', message: 'tool call denied: not approved' })
    expect(announced.map((a) => [a.call, a.answer])).toEqual([
      ['c1', { decision: 'allow' }],
      ['c2', { decision: 'deny' }],
    ])
  })

  it('a malformed answer denies (fail closed); a throwing tools/approval listener changes nothing', async () => {
    const malformed: unknown[] = [
      { decision: 'yes' },
      { decision: 'allow', remember: 'always' },
      { decision: 'allow', remember: { path: 3 } },
      { decision: 'allow', feedback: 42 },
      null,
      'Allow',
    ]
    let next = 0
    const { root, agent, ran } = await asking(() => malformed[next++] as ApprovalResponse)
    root.on('tools/approval', () => {
      throw new Error('observer bug')
    })
    for (let i = 0; i < malformed.length; i++) {
      expect((await root.tools.execute(call('rm', {}, `c${i}`), { agent })).error).toEqual({ code: 'DENIED', message: 'tool call denied: not approved' })
    }
    expect(ran).toEqual([])
  })

  it('feedback with allow is ignored; long feedback is cut', () => {
    expect(approvalAnswer({ decision: 'allow', feedback: 'fine' })).toEqual({ decision: 'allow' })
    expect(approvalAnswer({ decision: 'deny', feedback: '   ' })).toEqual({ decision: 'deny' })
    const long = approvalAnswer({ decision: 'deny', feedback: 'x'.repeat(MAX_FEEDBACK_CHARS + 10) })
    expect(long.feedback).toBe(`${'x'.repeat(MAX_FEEDBACK_CHARS - 1)}…`)
    expect(Object.isFrozen(approvalAnswer({ decision: 'deny', remember: { tool: 'rm' } }))).toBe(true)
  })

  it('tools/approval is scope-filtered by the calling agent', async () => {
    const { root, ran } = await asking(() => 'allow')
    const a = fakeAgent(root, 'a')
    const b = fakeAgent(root, 'b')
    const seen: string[] = []
    a.ctx.on('tools/approval', (request) => void seen.push(`a saw ${request.agent.id}`))
    await root.tools.execute(call('rm', {}, 'c1'), { agent: a })
    await root.tools.execute(call('rm', {}, 'c2'), { agent: b })
    expect(seen).toEqual(['a saw a'])
    expect(ran).toHaveLength(2)
  })
})
