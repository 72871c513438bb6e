import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '@deepseek-ai/dsh-tools'
import type { UserMessage } from '@deepseek-ai/dsh-llm'
import { deferred, spine, trace, transcript } from '@deepseek-ai/dsh-testkit'

const context = (label: string, body: string) => ({ label, content: [{ type: 'text' as const, text: body }] })

describe('admission (R-IN-1…8)', () => {
  it('R-IN-1: followup wakes the driver, queue stays parked until a wakeup, and both use one FIFO', async () => {
    const { agent, model } = await spine({ model: { script: ['A', 'B'] } })
    const a = await agent()
    const parked = a.queue('parked')
    await a.whenIdle()
    expect(a.inbox.nextTurn.map((m) => m.id)).toEqual([parked])
    expect(model.calls).toBe(0)
    a.followup('wakes')
    await a.whenIdle()
    expect(transcript(model.requests[0]!.messages)).toEqual(['user: parked'])
    expect(transcript(model.requests[1]!.messages)).toEqual(['user: parked', 'assistant: A', 'user: wakes'])
    expect(a.inbox.nextTurn).toEqual([])
  })

  it('every admission returns the id the logged message carries, and emits enqueue/dequeue events', async () => {
    const { agent, root } = await spine({ model: { script: ['ok'] } })
    const a = await agent()
    const seen: string[] = []
    root.on('agent/inbox/enqueue', (_agent, message) => void seen.push(`enqueue:${message.id}`))
    root.on('agent/inbox/dequeue', (_agent, message) => void seen.push(`dequeue:${message.id}`))
    const id = a.followup('hi')
    await a.whenIdle()
    const logged = a.session.events.find((event) => event.type === 'user/message')!
    expect(logged.type === 'user/message' && logged.data.message.id).toBe(id)
    expect(seen).toEqual([`enqueue:${id}`, `dequeue:${id}`])
  })

  it('R-IN-8: malformed input throws INVALID_INPUT and nothing is enqueued or logged', async () => {
    const { agent } = await spine()
    const a = await agent()
    const before = a.session.events.length
    expect(() => a.followup('   ')).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
    expect(() => a.steer([{ type: 'text', text: 3 } as never])).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
    expect(() => a.inject({ content: 'x', contexts: [context('l', 'c')] })).toThrow(/takes no contexts/)
    expect(() => a.send({ content: [{ type: 'text', text: 'x' }], source: { kind: 'user' }, contexts: [], placement: 'separate', metadata: {}, target: 'now' as never, wakeup: true })).toThrow(/target/)
    expect(a.session.events.length).toBe(before)
    expect(a.inbox).toEqual({ nextTurn: [], nextStep: [] })
  })

  it('R-IN-3 separate: one context message (source plugin context) right before the request message', async () => {
    const { agent, model } = await spine({ model: { script: ['ok'] } })
    const a = await agent()
    a.followup({ content: 'explain', contexts: [context('file a.ts', 'const a = 1'), context('file b.ts', 'const b = 2')] })
    await a.whenIdle()
    const messages = a.session.events.filter((e) => e.type === 'user/message').map((e) => (e.data as { message: UserMessage }).message)
    expect(messages.map((m) => [m.source, m.content])).toEqual([
      [{ kind: 'plugin', plugin: 'context' }, [{ type: 'text', text: 'const a = 1' }, { type: 'text', text: 'const b = 2' }]],
      [{ kind: 'user' }, [{ type: 'text', text: 'explain' }]],
    ])
    expect(transcript(model.requests[0]!.messages)).toEqual(['user: const a = 1 | const b = 2', 'user: explain'])
  })

  it('R-IN-3 prompt-prefix: contexts, the separator line and the request in one message; the envelope keeps display and labels', async () => {
    const { agent, model } = await spine({ model: { script: ['ok'] } })
    const a = await agent()
    const id = a.followup({ content: 'explain', contexts: [context('file a.ts', 'const a = 1')], placement: 'prompt-prefix' })
    await a.whenIdle()
    const event = a.session.events.find((e) => e.type === 'user/message')!
    expect(event.data).toEqual({
      message: {
        id,
        role: 'user',
        source: { kind: 'user' },
        content: [
          { type: 'text', text: 'const a = 1' },
          { type: 'text', text: '## My request:' },
          { type: 'text', text: 'explain' },
        ],
      },
      envelope: { display: [{ type: 'text', text: 'explain' }], contexts: [{ label: 'file a.ts' }] },
    })
    expect(transcript(model.requests[0]!.messages)).toEqual(['user: const a = 1 | ## My request: | explain'])
  })

  it('R-IN-2: prompt-submit may replace content and contexts; contexts are written only when allowed', async () => {
    const { agent, root, model } = await spine({ model: { script: ['ok'] } })
    root.on('agent/prompt-submit', async (_agent, content, _source, _signal, next) => {
      const decision = await next()
      if (decision.kind !== 'allow') return decision
      return { ...decision, content: [{ type: 'text', text: `[checked] ${(content[0] as { text: string }).text}` }], additionalContexts: [context('policy', 'be brief')] }
    })
    const a = await agent()
    a.followup({ content: 'hi', contexts: [context('dropped', 'not sent')] })
    await a.whenIdle()
    expect(transcript(model.requests[0]!.messages)).toEqual(['user: be brief', 'user: [checked] hi'])
  })

  it('R-IN-2: a blocked prompt ends the turn blocked and drops the item and its contexts', async () => {
    const { agent, root, model } = await spine({ model: { script: ['second'] } })
    root.on('agent/prompt-submit', async (_agent, content, _source, _signal, next) =>
      (content[0] as { text: string }).text === 'forbidden' ? { kind: 'block', reason: 'no' } : next(),
    )
    const a = await agent()
    a.followup({ content: 'forbidden', contexts: [context('c', 'secret')] })
    a.followup('allowed')
    await a.whenIdle()
    expect(trace(a.session).slice(0, 6)).toEqual([
      'inbox/enqueue next-turn "forbidden"',
      'inbox/enqueue next-turn "allowed"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'turn/end 1 blocked "no"',
      'inbox/dequeue',
    ])
    expect(transcript(model.requests[0]!.messages)).toEqual(['user: allowed'])
  })

  it('R-IN-4: the next ordinary item waits until the previous turn\'s flush has settled', async () => {
    const { agent, root, model } = await spine({ model: { script: ['one', 'two'] } })
    const gate = deferred()
    let checkpoints = 0
    root.on('session/flush', async (session) => {
      // The first turn's checkpoint (not the admission's or the step's flush) is held.
      if (session.events.at(-1)?.type === 'turn/end' && ++checkpoints === 1) await gate.promise
    })
    const a = await agent()
    a.followup('first')
    a.followup('second')
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    expect(trace(a.session).filter((l) => l.startsWith('turn/'))).toEqual(['turn/start 1 prompt', 'turn/end 1 completed'])
    expect(model.calls).toBe(1)
    gate.resolve()
    await a.whenIdle()
    expect(model.calls).toBe(2)
  })

  it('R-IN-5: steering during a step is claimed at its checkpoint and continues the turn', async () => {
    const { agent, model } = await spine({ model: { script: ['first answer', 'after steering'] } })
    const a = await agent()
    const call = model.control()
    a.followup('start')
    await call.started
    const steerId = a.steer('also consider X')
    await call.release()
    await a.whenIdle()
    expect(trace(a.session)).toEqual([
      'inbox/enqueue next-turn "start"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "start"',
      'request/header initial scripted/test-model',
      'inbox/enqueue next-step "also consider X"',
      'assistant/chunk ×4',
      'assistant/message "first answer" stop',
      'inbox/dequeue',
      'steering/message "also consider X"',
      'step/end 1.1',
      'step/start 1.2',
      'assistant/chunk ×4',
      'assistant/message "after steering" stop',
      'step/end 1.2',
      'turn/end 1 completed',
    ])
    const steering = a.session.events.find((e) => e.type === 'steering/message')!
    expect(steering.type === 'steering/message' && steering.data.message.id).toBe(steerId)
    expect(transcript(model.requests[1]!.messages)).toEqual(['user: start', 'assistant: first answer', 'user: also consider X'])
  })

  it('R-IN-5: steering that arrives after the checkpoint is the next step\'s proposed batch', async () => {
    const { agent, root, model } = await spine({ model: { script: ['one', 'two'] } })
    const proposals: string[][] = []
    let steered = false
    const a = await agent()
    root.on('agent/post-step', () => {
      if (!steered) {
        steered = true
        a.steer('late')
      }
    })
    root.on('agent/pre-step', (_agent, _turn, step, proposed) => {
      proposals.push(proposed.map((m) => `${step}:${(m.content[0] as { text: string }).text}`))
    })
    a.followup('go')
    await a.whenIdle()
    expect(proposals).toEqual([['1:go'], ['2:late']])
    expect(trace(a.session).filter((l) => !l.startsWith('assistant/chunk'))).toEqual([
      'inbox/enqueue next-turn "go"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "go"',
      'request/header initial scripted/test-model',
      'assistant/message "one" stop',
      'inbox/enqueue next-step "late"',
      'step/end 1.1',
      'step/start 1.2',
      'inbox/dequeue',
      'steering/message "late"',
      'assistant/message "two" stop',
      'step/end 1.2',
      'turn/end 1 completed',
    ])
    expect(model.calls).toBe(2)
  })

  it('R-IN-5: steer() with no open turn starts a steering turn without prompt-submit', async () => {
    const { agent, root, model } = await spine({ model: { script: ['ok'] } })
    let submits = 0
    root.on('agent/prompt-submit', async (_a, _c, _s, _signal, next) => {
      submits++
      return next()
    })
    const a = await agent()
    a.steer('nudge')
    await a.whenIdle()
    expect(submits).toBe(0)
    expect(trace(a.session).filter((l) => !l.startsWith('assistant/chunk'))).toEqual([
      'inbox/enqueue next-step "nudge"',
      'turn/start 1 steering',
      'step/start 1.1',
      'inbox/dequeue',
      'steering/message "nudge"',
      'request/header initial scripted/test-model',
      'assistant/message "ok" stop',
      'step/end 1.1',
      'turn/end 1 completed',
    ])
    expect(model.calls).toBe(1)
  })

  it('R-IN-6: steering left after a blocked turn moves to the ordinary FIFO with a wakeup, keeping its id', async () => {
    const { agent, root, model } = await spine({ model: { script: ['answered'] } })
    const a = await agent()
    let steerId = ''
    root.on('agent/prompt-submit', async (_agent, content, _source, _signal, next) => {
      if ((content[0] as { text: string }).text !== 'blocked one') return next()
      steerId = a.steer('keep me')
      return { kind: 'block', reason: 'blocked' }
    })
    a.followup('blocked one')
    await a.whenIdle()
    const lines = trace(a.session).filter((l) => !l.startsWith('assistant/chunk'))
    expect(lines.slice(0, 7)).toEqual([
      'inbox/enqueue next-turn "blocked one"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'inbox/enqueue next-step "keep me"',
      'inbox/requeue',
      'turn/end 1 blocked "blocked"',
      'inbox/dequeue',
    ])
    const requeue = a.session.events.find((e) => e.type === 'inbox/requeue')!
    expect(requeue.type === 'inbox/requeue' && requeue.data.id).toBe(steerId)
    expect(lines[7]).toBe('turn/start 2 prompt')
    expect(transcript(model.requests[0]!.messages)).toEqual(['user: keep me'])
  })

  it('R-IN-7: inject while idle writes a one-shot injection turn, flushed, and the model sees it next time', async () => {
    const { agent, root, model } = await spine({ model: { script: ['ok'] } })
    const flushed: number[] = []
    const a = await agent()
    root.on('session/flush', (session) => void flushed.push(session.events.length))
    a.inject('remember: tabs')
    expect(trace(a.session)).toEqual(['turn/start 1 injection', 'user/message "remember: tabs"', 'turn/end 1 completed'])
    await a.whenIdle()
    expect(flushed).toEqual([4])
    a.followup('go')
    await a.whenIdle()
    expect(transcript(model.requests[0]!.messages)).toEqual(['user: remember: tabs', 'user: go'])
  })

  it('R-IN-7: inject during a tool batch is deferred to after the step\'s last result', async () => {
    const gate = deferred<string>()
    let injectNow = () => {}
    const slow = defineTool({
      name: 'slow',
      description: 'waits',
      parameters: z.object({}),
      execute: async () => {
        injectNow()
        return gate.promise
      },
    })
    const { agent, model } = await spine({
      tools: [slow],
      model: { script: [{ toolCalls: [{ name: 'slow', arguments: {} }], answer: 'done' }] },
    })
    const a = await agent()
    injectNow = () => void a.inject('while the tool runs')
    a.followup('go')
    await new Promise((resolve) => setImmediate(resolve))
    gate.resolve('tool output')
    await a.whenIdle()
    expect(trace(a.session).filter((l) => !l.startsWith('assistant/chunk'))).toEqual([
      'inbox/enqueue next-turn "go"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "go"',
      'request/header initial scripted/test-model',
      'assistant/message "[tool-call]" tool-calls',
      'tool/call slow',
      'tool/result ok "tool output"',
      'user/message "while the tool runs"',
      'step/end 1.1',
      'step/start 1.2',
      'assistant/message "done" stop',
      'step/end 1.2',
      'turn/end 1 completed',
    ])
    expect(transcript(model.requests[1]!.messages)).toEqual([
      'user: go',
      'assistant: call slow({})',
      'user: result tool output',
      'user: while the tool runs',
    ])
  })

  it('R-IN-7: inject during the stream is deferred past the answer, so history never shows the model what it had not seen', async () => {
    const { agent, model } = await spine({ model: { script: ['answer'] } })
    const a = await agent()
    const call = model.control()
    a.followup('go')
    await call.started
    a.inject('late context')
    await call.release()
    await a.whenIdle()
    expect(trace(a.session).filter((l) => !l.startsWith('assistant/chunk')).slice(4)).toEqual([
      'user/message "go"',
      'request/header initial scripted/test-model',
      'assistant/message "answer" stop',
      'user/message "late context"',
      'step/end 1.1',
      'turn/end 1 completed',
    ])
  })

  it('the inbox projection is read-only and reflects both FIFOs', async () => {
    const { agent } = await spine()
    const a = await agent()
    a.queue('one')
    const inbox = a.inbox
    expect(Object.isFrozen(inbox)).toBe(true)
    expect(Object.isFrozen(inbox.nextTurn)).toBe(true)
    expect(inbox.nextTurn.map((m) => [m.target, m.wakeup])).toEqual([['next-turn', false]])
    expect(() => (inbox.nextTurn as unknown[]).push(1)).toThrow()
  })
})

describe('what the log carries for a resumed or forked agent (issue 15.6)', () => {
  it("R-IN-7: an injection's metadata is carried by its user/message on every path; empty metadata adds no field", async () => {
    const gate = deferred<string>()
    const slow = defineTool({ name: 'slow', description: 'waits', parameters: z.object({}), execute: () => gate.promise })
    const { agent, root, model } = await spine({ model: { script: [{ toolCalls: [{ name: 'slow', arguments: {} }], answer: 'done' }] }, tools: [slow] })
    const a = await agent()
    // Idle: a one-shot injection turn.
    a.inject({ content: 'idle note', metadata: { origin: 'ide', line: 3 } })
    // Between steps (from post-step): appended directly.
    root.on('agent/post-step', (_agent, _turn, step) => void (step === 1 && a.inject({ content: 'between steps', metadata: { origin: 'hook' } })))
    a.followup('go')
    // During the tool batch: deferred to after the step's last result.
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    a.inject({ content: 'deferred note', metadata: { origin: 'watcher' } })
    a.inject('no metadata')
    gate.resolve('slow done')
    await a.whenIdle()
    const injected = a.session.events.flatMap((event) =>
      event.type === 'user/message' && event.data.message.source.kind === 'user'
        ? [[(event.data.message.content[0] as { text: string }).text, 'metadata' in event.data ? event.data.metadata : 'none']]
        : [],
    )
    expect(injected).toEqual([
      ['idle note', { origin: 'ide', line: 3 }],
      ['go', 'none'],
      ['deferred note', { origin: 'watcher' }],
      ['no metadata', 'none'],
      ['between steps', { origin: 'hook' }],
    ])
    expect(model.calls).toBe(2)
  })

  it('R-IN-2: a blocked prompt logs its reason in turn/end{blocked}; a block without a reason string fails the turn INVALID_DECISION', async () => {
    const { agent, root } = await spine({ model: { script: ['unused'] } })
    root.on('agent/prompt-submit', async (_agent, content, _source, _signal, next) => {
      const text = (content[0] as { text: string }).text
      if (text === 'secret') return { kind: 'block', reason: 'the prompt names a secret' }
      if (text === 'broken') return { kind: 'block' } as never
      return next()
    })
    const a = await agent()
    a.followup('secret')
    a.followup('broken')
    await a.whenIdle()
    const ends = a.session.events.flatMap((event) => (event.type === 'turn/end' ? [event.data.reason] : []))
    expect(ends).toEqual([
      { kind: 'blocked', reason: 'the prompt names a secret' },
      { kind: 'error', failure: { code: 'INVALID_DECISION', message: 'agent/prompt-submit: a listener returned a malformed value (a block decision needs a reason string)' } },
    ])
  })
})
