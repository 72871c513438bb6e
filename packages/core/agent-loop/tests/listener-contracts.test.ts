// What a listener may return and do: a malformed decision fails the turn with INVALID_DECISION,
// and maintenance requested from inside the agent's own turn rejects WOULD_DEADLOCK.
import { describe, expect, it } from 'vitest'
import { deferred, settle, spine, trace } from '@deepseek-ai/dsh-testkit'

describe('listener contracts: a malformed decision fails the turn, a deadlock is refused', () => {
  it('pre-step may not enter one message twice', async () => {
    const { agent, root } = await spine()
    root.on('agent/pre-step', (_a, _t, _s, proposed) => ({ kind: 'enter', messages: [...proposed, ...proposed] }))
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(trace(a.session).at(-1)).toBe('turn/end 1 error INVALID_DECISION')
  })

  it('a malformed agent/request config or additional context fails the turn with INVALID_DECISION', async () => {
    const { agent, root } = await spine()
    let mode = 'config'
    root.on('agent/request', async (_a, _t, _s, _c, _signal, next) => (mode === 'config' ? ({ ...(await next()), maxTokens: 'many' } as never) : next()))
    root.on('agent/prompt-submit', async (_a, _c, _s, _signal, next) => {
      const decision = await next()
      return mode === 'contexts' && decision.kind === 'allow' ? { ...decision, additionalContexts: [{ label: 'x', content: 'not blocks' } as never] } : decision
    })
    const a = await agent()
    a.followup('one')
    await a.whenIdle()
    mode = 'contexts'
    a.followup('two')
    await a.whenIdle()
    expect(trace(a.session).filter((line) => line.startsWith('turn/end'))).toEqual(['turn/end 1 error INVALID_DECISION', 'turn/end 2 error INVALID_DECISION'])
  })

  it('content a prompt-submit listener hands back goes through the log\'s check: one that is not lossless JSON ends the turn INVALID_DECISION, never logged', async () => {
    const { agent, root } = await spine()
    root.on('agent/prompt-submit', async (_a, _c, _s, _signal, next) => {
      const decision = await next()
      return decision.kind === 'allow' ? { ...decision, content: [{ type: 'text', text: 'hi', score: Number.NaN, note: undefined } as never] } : decision
    })
    const a = await agent()
    a.followup('one')
    await a.whenIdle()
    expect(trace(a.session).at(-1)).toBe('turn/end 1 error INVALID_DECISION')
    // Every logged event survives a JSON round trip (what a persistence backend writes and reads back).
    for (const event of a.session.events) expect(JSON.parse(JSON.stringify(event.data))).toEqual(event.data)
  })

  it('a continue reason that is not a string fails the turn with INVALID_DECISION naming agent/turn-continuation; a blank one adds no message', async () => {
    const { agent, root } = await spine({ model: { script: ['one', 'two', 'three'] } })
    const reasons: unknown[] = [42, '  \n ']
    root.on('agent/turn-continuation', (_a, _t, _d, _signal, next) => (reasons.length ? ({ kind: 'continue', reason: reasons.shift() } as never) : next()))
    const errors: string[] = []
    root.on('agent/error', (_a, turn, step, error) => errors.push(`${turn}.${step} ${(error as { code?: string }).code}: ${(error as Error).message}`))
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    a.followup('again')
    await a.whenIdle()
    expect(trace(a.session)).toEqual([
      'inbox/enqueue next-turn "go"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "go"',
      'request/header initial scripted/test-model',
      'assistant/chunk ×3',
      'assistant/message "one" stop',
      'step/end 1.1',
      'turn/end 1 error INVALID_DECISION',
      'inbox/enqueue next-turn "again"',
      'inbox/dequeue',
      'turn/start 2 prompt',
      'step/start 2.1',
      'user/message "again"',
      'assistant/chunk ×3',
      'assistant/message "two" stop',
      'step/end 2.1',
      // A blank reason continues with nothing to say: no blank steering message for the provider to refuse.
      'step/start 2.2',
      'assistant/chunk ×3',
      'assistant/message "three" stop',
      'step/end 2.2',
      'turn/end 2 completed',
    ])
    expect(errors).toEqual(['1.undefined INVALID_DECISION: agent/turn-continuation: a listener returned a malformed value (a continue reason must be a string)'])
  })

  it('a listener that ignores the turn’s signal holds a cancel until it settles; its decision is then dropped (README known limitation)', async () => {
    const { agent, root, model } = await spine({ model: { script: ['never said'] } })
    const entered = deferred<void>()
    const held = deferred<void>()
    root.on('agent/pre-step', async () => {
      entered.resolve()
      await held.promise
      return { kind: 'reject' }
    })
    const a = await agent()
    a.followup('go')
    await entered.promise
    a.cancel({ kind: 'user' })
    let idle = false
    const idled = a.whenIdle().then(() => (idle = true))
    await settle()
    expect([idle, a.session.position.openTurn?.turn]).toEqual([false, 1])
    held.resolve()
    await idled
    expect(model.calls).toBe(0)
    expect(trace(a.session).slice(-2)).toEqual(['turn/start 1 prompt', 'turn/end 1 aborted'])
  })

  it('runMaintenance from inside the agent’s own running maintenance task rejects WOULD_DEADLOCK instead of freezing the agent', async () => {
    const { agent } = await spine({ model: { script: ['answered'] } })
    const a = await agent()
    // A plugin helper that wraps itself in runMaintenance, called from another such helper.
    const outer = a.runMaintenance(async () => {
      const inner = await a.runMaintenance(async () => 'inner ran').catch((error: { code?: string }) => error.code)
      return `outer saw ${inner}`
    })
    await expect(outer).resolves.toBe('outer saw WOULD_DEADLOCK')
    // The agent still takes work.
    a.followup('go')
    await a.whenIdle()
    expect(trace(a.session).at(-1)).toBe('turn/end 1 completed')
  })

  it('runMaintenance from inside the agent’s own turn rejects WOULD_DEADLOCK instead of hanging', async () => {
    const { agent, root } = await spine({ model: { script: ['x'] } })
    const a = await agent()
    let outcome: unknown
    root.on('agent/post-step', async () => {
      outcome = await a.runMaintenance(async () => 'never').catch((error) => error)
    })
    a.followup('go')
    await a.whenIdle()
    expect(outcome).toMatchObject({ code: 'WOULD_DEADLOCK' })
  })
})
