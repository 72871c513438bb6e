import { describe, expect, it } from 'vitest'
import type { ToolRunContext } from '@deepseek-ai/dsh-tools'
import { call, deferred, echoTool, fakeAgent, mountTools } from './helpers'

describe('deferred contexts', () => {
  it('come back in the order they were deferred, frozen, as context records', async () => {
    const root = await mountTools()
    root.tools.register(
      echoTool('open', async (_args, run) => {
        run.deferContext({ label: 'file: a.ts', content: 'export const a = 1' })
        await Promise.resolve()
        run.deferContext({ label: 'file: b.ts', content: [{ type: 'text', text: 'export const b = 2' }] })
        return 'opened 2 files'
      }),
    )
    const result = await root.tools.execute(call('open'), { agent: fakeAgent(root, 'a') })
    expect(result.contexts).toEqual([
      { label: 'file: a.ts', content: [{ type: 'text', text: 'export const a = 1' }] },
      { label: 'file: b.ts', content: [{ type: 'text', text: 'export const b = 2' }] },
    ])
    expect(Object.isFrozen(result.contexts)).toBe(true)
    expect(Object.isFrozen(result.contexts[0]!.content[0])).toBe(true)
  })

  it('belong to their own call: a call that defers none gets a frozen empty list, two calls never share one', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    root.tools.register(echoTool('quiet', () => 'ok'))
    root.tools.register(echoTool('open', (args, run) => (run.deferContext({ label: String((args as { n?: number }).n), content: 'x' }), 'ok')))
    const quiet = await root.tools.execute(call('quiet'), { agent })
    const first = await root.tools.execute(call('open', { n: 1 }), { agent })
    const second = await root.tools.execute(call('open', { n: 2 }), { agent })
    const again = await root.tools.execute(call('quiet'), { agent })
    expect([quiet.contexts, Object.isFrozen(quiet.contexts), again.contexts]).toEqual([[], true, []])
    expect([first.contexts.map((c) => c.label), second.contexts.map((c) => c.label)]).toEqual([['1'], ['2']])
  })

  it('snapshot the content: a body that mutates its array later changes nothing', async () => {
    const root = await mountTools()
    const blocks = [{ type: 'text' as const, text: 'before' }]
    root.tools.register(echoTool('open', (_args, run) => (run.deferContext({ label: 'x', content: blocks }), 'ok')))
    const result = await root.tools.execute(call('open'), { agent: fakeAgent(root, 'a') })
    blocks.push({ type: 'text', text: 'after' })
    expect(result.contexts[0]!.content).toEqual([{ type: 'text', text: 'before' }])
  })

  it('are kept on an error result, and dropped when a post-execute policy blocks the result', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    root.tools.register(
      echoTool('fail', (_args, run) => {
        run.deferContext({ label: 'log', content: 'partial output' })
        throw new Error('exit code 1')
      }),
    )
    root.tools.register(echoTool('leak', (_args, run) => (run.deferContext({ label: 'env', content: 'TOKEN=abc' }), 'TOKEN=abc')))
    root.on('tools/post-execute', async (invocation, _output, next) =>
      invocation.call.name === 'leak' ? { kind: 'block', reason: 'credential' } : next(),
    )
    const failed = await root.tools.execute(call('fail'), { agent })
    expect(failed.error?.code).toBe('TOOL_ERROR')
    expect(failed.contexts).toEqual([{ label: 'log', content: [{ type: 'text', text: 'partial output' }] }])
    const blocked = await root.tools.execute(call('leak'), { agent })
    expect(blocked.error?.code).toBe('BLOCKED')
    expect(blocked.contexts).toEqual([])
  })

  it('a malformed context throws INVALID_CONTEXT in the body', async () => {
    const root = await mountTools()
    const errors: unknown[] = []
    root.tools.register(
      echoTool('open', (_args, run) => {
        for (const bad of [null, { label: 1, content: 'x' }, { label: 'x', content: [{ type: 'text' }] }]) {
          try {
            run.deferContext(bad as never)
          } catch (error) {
            errors.push((error as { code: string }).code)
          }
        }
        return 'ok'
      }),
    )
    const result = await root.tools.execute(call('open'), { agent: fakeAgent(root, 'a') })
    expect(errors).toEqual(['INVALID_CONTEXT', 'INVALID_CONTEXT', 'INVALID_CONTEXT'])
    expect(result.contexts).toEqual([])
  })

  it('the run context is frozen, names the call, and its deferContext and signal work detached', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    const controller = new AbortController()
    let seen: { frozen: boolean; keys: PropertyKey[]; callId: string; name: string; agentIs: boolean; aborted: boolean } | undefined
    root.tools.register(
      echoTool('open', (_args, run) => {
        const { deferContext, signal } = run
        deferContext({ label: 'detached', content: 'x' })
        // Only the call's names are the body's to see: the run's internals are out of reach.
        const keys = Reflect.ownKeys(run)
        seen = { frozen: Object.isFrozen(run), keys, callId: run.callId, name: run.name, agentIs: run.agent === agent, aborted: signal.aborted }
        return 'ok'
      }),
    )
    const result = await root.tools.execute(call('open', {}, 'c7'), { agent, signal: controller.signal })
    expect(seen).toEqual({ frozen: true, keys: ['callId', 'name', 'agent'], callId: 'c7', name: 'open', agentIs: true, aborted: false })
    expect(result.contexts).toEqual([{ label: 'detached', content: [{ type: 'text', text: 'x' }] }])
  })

  it('a deferContext after the body settled throws CALL_SETTLED and is dropped', async () => {
    const root = await mountTools()
    let kept: ToolRunContext | undefined
    root.tools.register(echoTool('open', (_args, run) => ((kept = run), 'ok')))
    const result = await root.tools.execute(call('open'), { agent: fakeAgent(root, 'a') })
    expect(() => kept!.deferContext({ label: 'late', content: 'x' })).toThrow(expect.objectContaining({ code: 'CALL_SETTLED' }))
    expect(result.contexts).toEqual([])
  })

  it('two overlapping calls keep their own contexts', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    const gate = deferred()
    root.tools.register(
      echoTool('open', async (args, run) => {
        const name = (args as { name: string }).name
        run.deferContext({ label: `${name}:1`, content: name })
        await gate.promise
        run.deferContext({ label: `${name}:2`, content: name })
        return name
      }),
    )
    const first = root.tools.execute(call('open', { name: 'x' }, 'c1'), { agent })
    const second = root.tools.execute(call('open', { name: 'y' }, 'c2'), { agent })
    gate.resolve()
    expect((await first).contexts.map((c) => c.label)).toEqual(['x:1', 'x:2'])
    expect((await second).contexts.map((c) => c.label)).toEqual(['y:1', 'y:2'])
  })
})
