import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { CallId } from '@deepseek-ai/dsh-llm'
import { ToolError, type ToolApproval, type ToolCallResult } from '@deepseek-ai/dsh-tools'
import { call, echoTool, fakeAgent, mountTools, resultText } from './helpers'

function provideApproval(root: Context, approval: ToolApproval) {
  return root.plugin({
    apply: (ctx: Context) => void ctx.provide('approval', approval),
  })
}

describe('execute pipeline (R-TOOL-1)', () => {
  it('runs the stages in order: pre-execute → guards → execute wrapper → body → post-execute → finalizeContent → result', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    const trace: string[] = []
    root.tools.register(
      echoTool(
        'read',
        (args) => {
          trace.push(`body:${JSON.stringify(args)}`)
          return 'raw'
        },
        {
          finalizeContent: (output) => {
            trace.push(`finalize:${String(output)}`)
            return [{ type: 'text', text: `final(${String(output)})` }]
          },
        },
      ),
    )
    root.on('tools/pre-execute', async (invocation, next) => {
      trace.push(`pre:${invocation.call.name}`)
      return next()
    })
    root.tools.guard((invocation) => void trace.push(`guard:${invocation.call.name}`))
    root.on('tools/execute', async (_dispatch, next) => {
      trace.push('execute:before')
      const output = await next()
      trace.push('execute:after')
      return output
    })
    root.on('tools/post-execute', async (_invocation, output, next) => {
      trace.push(`post:${String(output)}`)
      return next()
    })
    root.on('tools/result', (who, c, result) => void trace.push(`result:${who.id}:${c.id}:${resultText(result).text}`))

    const result = await root.tools.execute(call('read', { path: 'a.ts' }), { agent })
    expect(trace).toEqual([
      'pre:read',
      'guard:read',
      'execute:before',
      'body:{"path":"a.ts"}',
      'execute:after',
      'post:raw',
      'finalize:raw',
      'result:a:call_1:final(raw)',
    ])
    expect(result).toEqual({
      message: {
        id: expect.stringMatching(/^msg_/),
        role: 'user',
        content: [{ type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: 'final(raw)' }] }],
        source: { kind: 'tool', callId: 'call_1' },
      },
      contexts: [],
    })
    expect(Object.isFrozen(result)).toBe(true)
  })

  it('an unknown tool is an UNKNOWN_TOOL result, and no policy runs', async () => {
    const root = await mountTools()
    const trace: string[] = []
    root.on('tools/pre-execute', async (_i, next) => (trace.push('pre'), next()))
    const result = await root.tools.execute(call('nope'), { agent: fakeAgent(root, 'a') })
    expect(result.error).toEqual({ code: 'UNKNOWN_TOOL', message: 'unknown tool "nope"' })
    expect(resultText(result)).toEqual({ text: 'Error: unknown tool "nope"', isError: true })
    expect(trace).toEqual([])
  })

  it('a tool local to another agent is unknown to this one', async () => {
    const root = await mountTools()
    fakeAgent(root, 'b').ctx.tools.register(echoTool('secret'))
    const result = await root.tools.execute(call('secret'), { agent: fakeAgent(root, 'a') })
    expect(result.error?.code).toBe('UNKNOWN_TOOL')
  })

  it('arguments must parse as a JSON object: INVALID_ARGUMENTS with a fixed text', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    let ran = 0
    root.tools.register(echoTool('read', () => String(++ran)))
    const texts: string[] = []
    for (const raw of ['{"path": ', '[1,2]', '"text"', 'null', '42']) {
      const result = await root.tools.execute(call('read', raw), { agent })
      expect(result.error?.code).toBe('INVALID_ARGUMENTS')
      texts.push(resultText(result).text)
    }
    expect(texts).toEqual([
      'Error: invalid arguments for read: arguments are not valid JSON',
      'Error: invalid arguments for read: arguments must be a JSON object',
      'Error: invalid arguments for read: arguments must be a JSON object',
      'Error: invalid arguments for read: arguments must be a JSON object',
      'Error: invalid arguments for read: arguments must be a JSON object',
    ])
    expect(ran).toBe(0)
  })

  it('empty argument text counts as {} (providers send none for parameterless tools)', async () => {
    const root = await mountTools()
    root.tools.register(echoTool('now', (args) => JSON.stringify(args)))
    const result = await root.tools.execute(call('now', ''), { agent: fakeAgent(root, 'a') })
    expect(resultText(result)).toEqual({ text: '{}', isError: false })
  })

  it("the validator's message becomes the INVALID_ARGUMENTS result and the body never runs", async () => {
    const root = await mountTools()
    let ran = false
    root.tools.register(
      echoTool('read', () => ((ran = true), 'x'), {
        validate: (args) => {
          if (typeof (args as { path?: unknown }).path !== 'string') throw new Error('path: expected a string')
          return args
        },
      }),
    )
    const result = await root.tools.execute(call('read', { path: 1 }), { agent: fakeAgent(root, 'a') })
    expect(result.error).toEqual({ code: 'INVALID_ARGUMENTS', message: 'invalid arguments for read: path: expected a string' })
    expect(ran).toBe(false)
  })

  it('the body receives what validate returned', async () => {
    const root = await mountTools()
    root.tools.register(echoTool('read', (args) => JSON.stringify(args), { validate: (args) => ({ ...(args as object), normalized: true }) }))
    const result = await root.tools.execute(call('read', { path: 'a' }), { agent: fakeAgent(root, 'a') })
    expect(resultText(result).text).toBe('{"path":"a","normalized":true}')
  })

  describe('tools/pre-execute', () => {
    it('deny refuses the call with DENIED and the reason', async () => {
      const root = await mountTools()
      let ran = false
      root.tools.register(echoTool('rm', () => ((ran = true), 'gone')))
      root.on('tools/pre-execute', async () => ({ kind: 'deny', reason: 'rm is disabled in this workspace' }))
      const result = await root.tools.execute(call('rm'), { agent: fakeAgent(root, 'a') })
      expect(result.error).toEqual({ code: 'DENIED', message: 'tool call denied: rm is disabled in this workspace' })
      expect(resultText(result)).toEqual({ text: 'Error: tool call denied: rm is disabled in this workspace', isError: true })
      expect(ran).toBe(false)
    })

    it('ask without an approval service is DENIED', async () => {
      const root = await mountTools()
      root.tools.register(echoTool('rm'))
      root.on('tools/pre-execute', async () => ({ kind: 'ask', reason: 'destructive' }))
      const result = await root.tools.execute(call('rm'), { agent: fakeAgent(root, 'a') })
      expect(result.error).toEqual({ code: 'DENIED', message: 'tool call denied: approval required but no approval service is available' })
    })

    it('ask goes to ctx.approval with the invocation and the reason; allow runs, deny refuses', async () => {
      const root = await mountTools()
      const agent = fakeAgent(root, 'a')
      root.tools.register(echoTool('rm', () => 'removed'))
      root.on('tools/pre-execute', async () => ({ kind: 'ask', reason: 'destructive' }))
      const asked: string[] = []
      let verdict: 'allow' | 'deny' = 'allow'
      await provideApproval(root, {
        request: async (request) => {
          asked.push(`${request.agent.id}:${request.call.name}:${JSON.stringify(request.args)}:${request.reason}`)
          return verdict
        },
      })
      expect(resultText(await root.tools.execute(call('rm', { path: 'x' }), { agent }))).toEqual({ text: 'removed', isError: false })
      verdict = 'deny'
      const denied = await root.tools.execute(call('rm', { path: 'y' }), { agent })
      expect(denied.error).toEqual({ code: 'DENIED', message: 'tool call denied: not approved' })
      expect(asked).toEqual(['a:rm:{"path":"x"}:destructive', 'a:rm:{"path":"y"}:destructive'])
    })

    it('an approval service that throws or answers nonsense denies (fail closed)', async () => {
      const root = await mountTools()
      const agent = fakeAgent(root, 'a')
      root.tools.register(echoTool('rm'))
      root.on('tools/pre-execute', async () => ({ kind: 'ask' }))
      let answer: () => Promise<'allow' | 'deny'> = async () => {
        throw new Error('dialog crashed')
      }
      await provideApproval(root, { request: () => answer() })
      expect((await root.tools.execute(call('rm'), { agent })).error).toEqual({
        code: 'DENIED',
        message: 'tool call denied: the approval request failed (dialog crashed)',
      })
      answer = async () => 'yes' as never
      expect((await root.tools.execute(call('rm'), { agent })).error?.code).toBe('DENIED')
    })

    it('a listener that throws denies (fail closed); a thrown ToolError keeps its code', async () => {
      const root = await mountTools()
      const agent = fakeAgent(root, 'a')
      root.tools.register(echoTool('read'))
      let failure: unknown = new Error('policy file unreadable')
      root.on('tools/pre-execute', () => {
        throw failure
      })
      expect((await root.tools.execute(call('read'), { agent })).error).toEqual({
        code: 'DENIED',
        message: 'tool call denied: a policy check failed (policy file unreadable)',
      })
      failure = new ToolError('DENIED', 'tool call denied: read-only mode')
      expect((await root.tools.execute(call('read'), { agent })).error).toEqual({ code: 'DENIED', message: 'tool call denied: read-only mode' })
    })

    it('an unknown decision denies', async () => {
      const root = await mountTools()
      root.tools.register(echoTool('read'))
      root.on('tools/pre-execute', async () => ({ kind: 'maybe' }) as never)
      const result = await root.tools.execute(call('read'), { agent: fakeAgent(root, 'a') })
      expect(result.error).toEqual({ code: 'DENIED', message: 'tool call denied: a policy returned an unknown decision' })
    })
  })

  describe('guards', () => {
    it('are monotonic: a guard denies what pre-execute and approval allowed, and no guard can allow it back', async () => {
      const root = await mountTools()
      const agent = fakeAgent(root, 'a')
      let ran = false
      root.tools.register(echoTool('write', () => ((ran = true), 'written')))
      root.on('tools/pre-execute', async () => ({ kind: 'ask' }))
      await provideApproval(root, { request: async () => 'allow' })
      const order: string[] = []
      root.tools.guard(() => void order.push('first'))
      root.tools.guard(() => (order.push('second'), { kind: 'deny', reason: 'outside the sandbox' }))
      root.tools.guard(() => void order.push('third'))
      const result = await root.tools.execute(call('write'), { agent })
      expect(result.error).toEqual({ code: 'DENIED', message: 'tool call denied: outside the sandbox' })
      expect(order).toEqual(['first', 'second'])
      expect(ran).toBe(false)
    })

    it('a guard that throws denies', async () => {
      const root = await mountTools()
      root.tools.register(echoTool('write'))
      root.tools.guard(async () => {
        throw new Error('sandbox offline')
      })
      const result = await root.tools.execute(call('write'), { agent: fakeAgent(root, 'a') })
      expect(result.error).toEqual({ code: 'DENIED', message: 'tool call denied: a guard failed (sandbox offline)' })
    })

    it('agent-local guards apply to their agent only and revert with their fiber', async () => {
      const root = await mountTools()
      const a = fakeAgent(root, 'a')
      const b = fakeAgent(root, 'b')
      root.tools.register(echoTool('write'))
      const fiber = a.ctx.plugin({
        inject: ['tools'],
        apply: (ctx: Context) => void ctx.tools.guard(() => ({ kind: 'deny', reason: 'a is read-only' })),
      })
      await fiber
      expect((await root.tools.execute(call('write'), { agent: a })).error?.message).toBe('tool call denied: a is read-only')
      expect((await root.tools.execute(call('write'), { agent: b })).error).toBeUndefined()
      await fiber.dispose()
      expect((await root.tools.execute(call('write'), { agent: a })).error).toBeUndefined()
    })
  })

  describe('tools/execute', () => {
    it('the body sees an abort of the caller signal even when a wrapper replaced the signal', async () => {
      const root = await mountTools()
      const caller = new AbortController()
      const replacement = new AbortController()
      let bodySignal: AbortSignal | undefined
      root.tools.register(
        echoTool('wait', (_args, run) => {
          bodySignal = run.signal
          caller.abort(new Error('user pressed Ctrl-C'))
          return run.signal.aborted ? 'saw the abort' : 'missed the abort'
        }),
      )
      root.on('tools/execute', async (dispatch, next) => {
        dispatch.signal = replacement.signal
        return next()
      })
      const result = await root.tools.execute(call('wait'), { agent: fakeAgent(root, 'a'), signal: caller.signal })
      expect(resultText(result).text).toBe('saw the abort')
      expect(bodySignal).not.toBe(replacement.signal)
    })

    it("the body sees an abort of the wrapper's replacement signal", async () => {
      const root = await mountTools()
      const replacement = new AbortController()
      root.tools.register(
        echoTool('wait', (_args, run) => {
          replacement.abort()
          return String(run.signal.aborted)
        }),
      )
      root.on('tools/execute', async (dispatch, next) => {
        dispatch.signal = replacement.signal
        return next()
      })
      const result = await root.tools.execute(call('wait'), { agent: fakeAgent(root, 'a') })
      expect(resultText(result).text).toBe('true')
    })

    it("wrappers cannot replace the result: the body's output is used", async () => {
      const root = await mountTools()
      root.tools.register(echoTool('read', () => 'real'))
      root.on('tools/execute', async (_dispatch, next) => {
        await next()
        return 'forged'
      })
      expect(resultText(await root.tools.execute(call('read'), { agent: fakeAgent(root, 'a') })).text).toBe('real')
    })

    it('a wrapper that returns without calling next() fails the call with TOOL_ERROR', async () => {
      const root = await mountTools()
      root.tools.register(echoTool('read'))
      root.on('tools/execute', async () => 'cached')
      const result = await root.tools.execute(call('read'), { agent: fakeAgent(root, 'a') })
      expect(result.error).toEqual({
        code: 'TOOL_ERROR',
        message: 'the tool did not run: a tools/execute listener returned without calling next()',
      })
    })

    it('a wrapper that assigns something other than an AbortSignal fails the call', async () => {
      const root = await mountTools()
      root.tools.register(echoTool('read'))
      root.on('tools/execute', async (dispatch, next) => {
        dispatch.signal = 'soon' as never
        return next()
      })
      const result = await root.tools.execute(call('read'), { agent: fakeAgent(root, 'a') })
      expect(result.error).toEqual({ code: 'TOOL_ERROR', message: 'tools/execute: dispatch.signal must be an AbortSignal' })
    })
  })

  describe('the body', () => {
    it('a throw becomes a TOOL_ERROR result with its message; a thrown ToolError keeps its code', async () => {
      const root = await mountTools()
      const agent = fakeAgent(root, 'a')
      root.tools.register(
        echoTool('read', () => {
          throw new Error('ENOENT: no such file a.ts')
        }),
      )
      root.tools.register(
        echoTool('sync', () => {
          throw new ToolError('DENIED', 'tool call denied: path outside the workspace')
        }),
      )
      root.tools.register(echoTool('empty', () => Promise.reject(undefined)))
      expect((await root.tools.execute(call('read'), { agent })).error).toEqual({ code: 'TOOL_ERROR', message: 'ENOENT: no such file a.ts' })
      expect(resultText(await root.tools.execute(call('read'), { agent }))).toEqual({ text: 'Error: ENOENT: no such file a.ts', isError: true })
      expect((await root.tools.execute(call('sync'), { agent })).error).toEqual({ code: 'DENIED', message: 'tool call denied: path outside the workspace' })
      expect((await root.tools.execute(call('empty'), { agent })).error).toEqual({ code: 'TOOL_ERROR', message: 'tool failed' })
    })

    it('content blocks pass through; malformed output is a TOOL_ERROR', async () => {
      const root = await mountTools()
      const agent = fakeAgent(root, 'a')
      root.tools.register(
        echoTool('shot', () => [
          { type: 'text', text: 'screenshot:' },
          { type: 'image', mediaType: 'image/png', data: 'iVBORw0K' },
        ]),
      )
      root.tools.register(echoTool('bad', () => 42 as never))
      root.tools.register(echoTool('worse', () => [{ type: 'text', text: 1 }] as never))
      const shot = await root.tools.execute(call('shot'), { agent })
      expect(shot.message.content).toEqual([
        {
          type: 'tool-result',
          toolCallId: 'call_1',
          content: [
            { type: 'text', text: 'screenshot:' },
            { type: 'image', mediaType: 'image/png', data: 'iVBORw0K' },
          ],
        },
      ])
      expect((await root.tools.execute(call('bad'), { agent })).error).toEqual({
        code: 'TOOL_ERROR',
        message: 'the tool output must be a string or content blocks',
      })
      expect((await root.tools.execute(call('worse'), { agent })).error).toEqual({
        code: 'TOOL_ERROR',
        message: 'malformed tool output: the tool output[0].text must be a string',
      })
    })

    it('run carries the call id, the name and the initiating agent', async () => {
      const root = await mountTools()
      const agent = fakeAgent(root, 'a')
      let seen: unknown
      root.tools.register(echoTool('who', (_args, run) => ((seen = { callId: run.callId, name: run.name, agent: run.agent }), 'ok')))
      await root.tools.execute(call('who', {}, 'call_9'), { agent })
      expect(seen).toEqual({ callId: CallId('call_9'), name: 'who', agent })
      expect((seen as { agent: unknown }).agent).toBe(agent)
    })
  })

  describe('tools/post-execute', () => {
    it('replace substitutes the output before finalizeContent', async () => {
      const root = await mountTools()
      root.tools.register(echoTool('env', () => 'API_KEY=sk-123', { finalizeContent: (output) => [{ type: 'text', text: `<${String(output)}>` }] }))
      root.on('tools/post-execute', async (_invocation, output, next) => {
        const decision = await next()
        return typeof output === 'string' && output.includes('sk-') ? { kind: 'replace', output: 'API_KEY=[redacted]' } : decision
      })
      const result = await root.tools.execute(call('env'), { agent: fakeAgent(root, 'a') })
      expect(resultText(result)).toEqual({ text: '<API_KEY=[redacted]>', isError: false })
    })

    it('block withholds the output with BLOCKED; a throw blocks too', async () => {
      const root = await mountTools()
      const agent = fakeAgent(root, 'a')
      root.tools.register(echoTool('env', () => 'secret'))
      let listener: () => unknown = async () => ({ kind: 'block', reason: 'the output contains a credential' })
      root.on('tools/post-execute', () => listener() as never)
      const blocked = await root.tools.execute(call('env'), { agent })
      expect(blocked.error).toEqual({ code: 'BLOCKED', message: 'tool result withheld: the output contains a credential' })
      expect(resultText(blocked)).toEqual({ text: 'Error: tool result withheld: the output contains a credential', isError: true })
      listener = () => {
        throw new Error('scanner crashed')
      }
      expect((await root.tools.execute(call('env'), { agent })).error).toEqual({
        code: 'BLOCKED',
        message: 'tool result withheld: a policy check failed (scanner crashed)',
      })
    })

    it('does not run for calls that failed earlier', async () => {
      const root = await mountTools()
      root.tools.register(
        echoTool('read', () => {
          throw new Error('boom')
        }),
      )
      let ran = false
      root.on('tools/post-execute', async (_i, _o, next) => ((ran = true), next()))
      await root.tools.execute(call('read'), { agent: fakeAgent(root, 'a') })
      expect(ran).toBe(false)
    })

    it('a replacement that is not a valid output is a TOOL_ERROR', async () => {
      const root = await mountTools()
      root.tools.register(echoTool('read'))
      root.on('tools/post-execute', async () => ({ kind: 'replace', output: { oops: true } as never }))
      const result = await root.tools.execute(call('read'), { agent: fakeAgent(root, 'a') })
      expect(result.error).toEqual({ code: 'TOOL_ERROR', message: 'the replacement output must be a string or content blocks' })
    })
  })

  it('finalizeContent that throws is a TOOL_ERROR', async () => {
    const root = await mountTools()
    root.tools.register(
      echoTool('read', () => 'x', {
        finalizeContent: () => {
          throw new Error('cannot render diff')
        },
      }),
    )
    const result = await root.tools.execute(call('read'), { agent: fakeAgent(root, 'a') })
    expect(result.error).toEqual({ code: 'TOOL_ERROR', message: 'cannot render diff' })
  })

  describe('tools/result', () => {
    it('reports every result, including early failures, and contains listener failures (R-TOOL-2)', async () => {
      const root = await mountTools()
      const agent = fakeAgent(root, 'a')
      root.tools.register(echoTool('read'))
      const seen: string[] = []
      root.on('tools/result', () => {
        throw new Error('ui crashed')
      })
      root.on('tools/result', (_agent, c, result) => void seen.push(`${c.name}:${result.error?.code ?? 'ok'}`))
      const results: ToolCallResult[] = [
        await root.tools.execute(call('read'), { agent }),
        await root.tools.execute(call('nope'), { agent }),
        await root.tools.execute(call('read', '{'), { agent }),
      ]
      expect(seen).toEqual(['read:ok', 'nope:UNKNOWN_TOOL', 'read:INVALID_ARGUMENTS'])
      expect(results.map((r) => r.error?.code)).toEqual([undefined, 'UNKNOWN_TOOL', 'INVALID_ARGUMENTS'])
    })
  })

  it('never rejects, even for a malformed call or a missing agent', async () => {
    const root = await mountTools()
    root.tools.register(echoTool('read'))
    const odd = [
      root.tools.execute({ id: CallId('c'), name: 42 as never, arguments: '{}' }, { agent: fakeAgent(root, 'a') }),
      root.tools.execute({ id: CallId('c'), name: 'read', arguments: 7 as never }, { agent: fakeAgent(root, 'a') }),
      root.tools.execute(call('read'), { agent: undefined as never }),
    ]
    const results = await Promise.all(odd)
    expect(results.map((r) => r.error?.code)).toEqual(['UNKNOWN_TOOL', 'INVALID_ARGUMENTS', 'TOOL_ERROR'])
    for (const result of results) expect(resultText(result).isError).toBe(true)
  })
})
