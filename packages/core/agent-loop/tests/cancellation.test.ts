import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '@deepseek-ai/dsh-tools'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { deferred, settle, spine, trace, transcript } from '@deepseek-ai/dsh-testkit'

const noChunks = (lines: string[]) => lines.filter((line) => !line.startsWith('assistant/chunk'))

/** The turn signal of every model call, as the loop hands it to `ctx.llm`. */
function captureSignals(root: import('cordis').Context): AbortSignal[] {
  const signals: AbortSignal[] = []
  root.on('llm/stream', (call, next) => {
    if (call.options.signal) signals.push(call.options.signal)
    return next()
  })
  return signals
}

describe('cancellation (R-CAN-1…6)', () => {
  it('R-CAN-3: cancel with no open turn is a no-op: nothing emitted, the inbox kept', async () => {
    const { agent, root } = await spine()
    const a = await agent()
    const seen: string[] = []
    root.on('agent/cancel-requested', () => void seen.push('cancel-requested'))
    root.on('agent/inbox/discard', () => void seen.push('discard'))
    a.queue('parked')
    const before = a.session.events.length
    a.cancel({ kind: 'user' })
    expect(seen).toEqual([])
    expect(a.session.events.length).toBe(before)
    expect(a.inbox.nextTurn).toHaveLength(1)
  })

  it('R-CAN-2/4: mid-stream cancel: cancel-requested, pending work discarded, then the interrupted anchor keeps what arrived', async () => {
    const { agent, root, model } = await spine({
      model: { script: [{ text: 'partial answer here', toolCalls: [{ name: 'read', arguments: { path: 'a' } }, { name: 'read', arguments: { path: 'b' } }] }] },
    })
    const a = await agent()
    const order: string[] = []
    const signals = captureSignals(root)
    root.on('agent/cancel-requested', (_agent, cause) => void order.push(`cancel-requested ${cause.kind}`))
    root.on('agent/inbox/discard', (_agent, messages) => void order.push(`discard ${messages.length}`))
    const call = model.control()
    a.followup('go')
    await call.started
    a.queue('queued item')
    a.steer('steering item')
    // Stream the text and the first tool call completely, then half of the second call's arguments.
    for (let i = 0; i < 3; i++) await call.step()
    await call.push({ type: 'tool-call-delta', index: 1, id: 'call_1' as never, name: 'read', argumentsDelta: '{"path":"a"}' })
    await call.push({ type: 'tool-call-delta', index: 2, id: 'call_2' as never, name: 'read', argumentsDelta: '{"pa' })
    signals[0]!.addEventListener('abort', () => void order.push('aborted'))
    a.cancel({ kind: 'user' })
    expect(order).toEqual(['cancel-requested user', 'discard 2', 'aborted'])
    await a.whenIdle()
    const anchor = a.session.events.find((e) => e.type === 'assistant/message') as AnySessionEvent & { type: 'assistant/message' }
    expect(anchor.data.interrupted).toBe(true)
    expect(anchor.data.finishReason).toEqual({ kind: 'aborted' })
    expect(anchor.data.message.content).toEqual([
      { type: 'text', text: 'partial answer here' },
      { type: 'tool-call', id: 'call_1', name: 'read', arguments: '{"path":"a"}' },
    ])
    expect(noChunks(trace(a.session)).slice(-6)).toEqual([
      'inbox/discard ×2',
      'assistant/message "partial answer here[tool-call]" aborted interrupted',
      'tool/call read',
      'tool/result ABORTED_BEFORE_DISPATCH "Error: tool call aborted before dispatch"',
      'step/end 1.1',
      'turn/end 1 aborted',
    ])
    expect(a.inbox).toEqual({ nextTurn: [], nextStep: [] })
  })

  it('R-CAN-6: after a cancel the next request is valid: every tool call has its result', async () => {
    const { agent, model } = await spine({
      model: { script: [{ toolCalls: [{ name: 'read', arguments: { path: 'a' } }], answer: 'unused' }, 'fresh answer'] },
    })
    const a = await agent()
    const call = model.control()
    a.followup('go')
    await call.started
    await call.release()
    // The call is streamed; cancel before the tool starts (no such tool: it would fail fast anyway).
    a.cancel({ kind: 'user' })
    await a.whenIdle()
    a.followup('again')
    await a.whenIdle()
    const last = model.requests.at(-1)!
    expect(transcript(last.messages)).toEqual([
      'user: go',
      'assistant: call read({"path":"a"})',
      'user: result Error: tool call aborted before dispatch',
      'user: again',
    ])
  })

  it('R-CAN-4: a cancel during the batch drains started calls (real results) and synthesizes the never-started ones, then post-step sees the aborted signal', async () => {
    const started = deferred()
    const slow = defineTool({
      name: 'slow',
      description: 'stops when aborted',
      parameters: z.object({ n: z.number() }),
      execute: (_args, run) =>
        new Promise<string>((resolve) => {
          started.resolve()
          run.signal.addEventListener('abort', () => resolve('stopped early, partial work kept'))
        }),
    })
    const { agent, root, model } = await spine({
      tools: [slow],
      model: { script: [{ toolCalls: [{ name: 'slow', arguments: { n: 1 } }, { name: 'slow', arguments: { n: 2 } }], answer: 'unused' }] },
    })
    const postStep: boolean[] = []
    root.on('agent/post-step', (_a, _t, _s, signal) => void postStep.push(signal.aborted))
    const a = await agent()
    a.followup('go')
    await started.promise
    a.cancel({ kind: 'user' })
    await a.whenIdle()
    expect(noChunks(trace(a.session)).slice(6)).toEqual([
      'assistant/message "[tool-call][tool-call]" tool-calls',
      'tool/call slow',
      'tool/result ok "stopped early, partial work kept"',
      'tool/call slow',
      'tool/result ABORTED_BEFORE_DISPATCH "Error: tool call aborted before dispatch"',
      'step/end 1.1',
      'turn/end 1 aborted',
    ])
    expect(postStep).toEqual([true])
    expect(model.calls).toBe(1)
  })

  it('R-CAN-2: keepInbox keeps queued and steering items; the steering moves to the ordinary FIFO and the driver goes on', async () => {
    const { agent, model } = await spine({ model: { script: ['cut', 'queued answered', 'steering answered'] } })
    const a = await agent()
    const call = model.control()
    a.followup('first')
    await call.started
    const queued = a.queue('queued')
    const steering = a.steer('steering')
    a.cancel({ kind: 'user' }, { keepInbox: true })
    await a.whenIdle()
    expect(noChunks(trace(a.session)).filter((l) => l.startsWith('turn/') || l.startsWith('inbox/'))).toEqual([
      'inbox/enqueue next-turn "first"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'inbox/enqueue next-turn "queued"',
      'inbox/enqueue next-step "steering"',
      'inbox/requeue',
      'turn/end 1 aborted',
      'inbox/dequeue',
      'turn/start 2 prompt',
      'turn/end 2 completed',
      'inbox/dequeue',
      'turn/start 3 prompt',
      'turn/end 3 completed',
    ])
    const dequeued = a.session.events.filter((e) => e.type === 'inbox/dequeue').map((e) => e.type === 'inbox/dequeue' && e.data.id)
    expect(dequeued.slice(1)).toEqual([queued, steering])
  })

  it('R-CAN-2: listener failures cannot veto; work queued by notify listeners is cleared, work queued by abort observers survives', async () => {
    const { agent, root, model } = await spine({ model: { script: ['cut', 'after abort'] } })
    const a = await agent()
    root.on('agent/cancel-requested', () => {
      a.followup('queued by a notify listener')
      throw new Error('listener bug')
    })
    const signals = captureSignals(root)
    const call = model.control()
    a.followup('first')
    await call.started
    signals[0]!.addEventListener('abort', () => void a.followup('queued by an abort observer'))
    a.cancel({ kind: 'parent' })
    await a.whenIdle()
    const turns = noChunks(trace(a.session)).filter((l) => l.startsWith('turn/end') || l.startsWith('inbox/'))
    expect(turns).toEqual([
      'inbox/enqueue next-turn "first"',
      'inbox/dequeue',
      'inbox/enqueue next-turn "queued by a notify listener"',
      'inbox/discard ×1',
      'inbox/enqueue next-turn "queued by an abort observer"',
      'turn/end 1 aborted',
      'inbox/dequeue',
      'turn/end 2 completed',
    ])
    expect(transcript(model.requests[1]!.messages).at(-1)).toBe('user: queued by an abort observer')
  })

  it('a hook cause aborts without cancel-requested', async () => {
    const { agent, root, model } = await spine({ model: { script: ['cut'] } })
    const a = await agent()
    let notified = 0
    root.on('agent/cancel-requested', () => void notified++)
    const call = model.control()
    a.followup('first')
    await call.started
    a.cancel({ kind: 'hook', reason: 'budget' })
    await a.whenIdle()
    expect(notified).toBe(0)
    expect(trace(a.session).at(-1)).toBe('turn/end 1 aborted')
  })

  it('R-CAN-1: cancel during prompt policy ends the turn before any step; the item is dropped', async () => {
    const { agent, root, model } = await spine()
    const a = await agent()
    const gate = deferred()
    root.on('agent/prompt-submit', async (_a, _c, _s, signal, next) => {
      await gate.promise
      expect(signal.aborted).toBe(true)
      return next()
    })
    a.followup('first')
    await settle()
    a.cancel({ kind: 'user' })
    gate.resolve()
    await a.whenIdle()
    expect(trace(a.session)).toEqual(['inbox/enqueue next-turn "first"', 'inbox/dequeue', 'turn/start 1 prompt', 'turn/end 1 aborted'])
    expect(model.calls).toBe(0)
  })

  it('R-CAN-1/3: the holder is retired before turn/end: a cancel during the flush is a no-op', async () => {
    const { agent, root } = await spine({ model: { script: ['done'] } })
    const a = await agent()
    const gate = deferred()
    let seenDuringFlush = 0
    root.on('session/flush', async (session) => {
      // The turn's checkpoint (before the request, the step's flush would see an open turn).
      if (session.events.at(-1)?.type !== 'turn/end') return
      a.cancel({ kind: 'user' })
      await gate.promise
    })
    root.on('agent/cancel-requested', () => void seenDuringFlush++)
    a.followup('go')
    await settle()
    await settle()
    expect(a.status).toBe('running')
    gate.resolve()
    await a.whenIdle()
    expect(seenDuringFlush).toBe(0)
    expect(trace(a.session).at(-1)).toBe('turn/end 1 completed')
  })

  it('R-CAN-5: dispose wins: the open turn ends aborted, and a tool that ignores its signal settles before dispose resolves', async () => {
    const gate = deferred<string>()
    let bodyDone = false
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'ignores its signal',
      parameters: z.object({}),
      execute: async () => {
        const out = await gate.promise
        bodyDone = true
        return out
      },
    })
    const { root, model } = await spine({ tools: [stubborn], model: { script: [{ toolCalls: [{ name: 'stubborn', arguments: {} }], answer: 'x' }] } })
    const handle = await root.agents.create({ sessionId: 'a' as never, agentOptions: { provider: 'scripted', model: 'test-model' } })
    handle.agent.followup('go')
    await settle()
    let disposed = false
    const disposing = handle.dispose().then(() => (disposed = true))
    await settle()
    expect(disposed).toBe(false)
    gate.resolve('finished anyway')
    await disposing
    expect(bodyDone).toBe(true)
    expect(noChunks(trace(handle.agent.session)).slice(-4)).toEqual([
      'tool/call stubborn',
      'tool/result ok "finished anyway"',
      'step/end 1.1',
      'turn/end 1 aborted',
    ])
    expect(model.calls).toBe(1)
  })
})
