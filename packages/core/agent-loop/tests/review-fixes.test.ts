import { describe, expect, it } from 'vitest'
import { SessionId, memoryPersistence, MemorySessionPersistence } from '@deepseek-ai/dsh-session'
import { deferred, settle, spine, trace, transcript } from '@deepseek-ai/dsh-testkit'

const id = SessionId('a')
const opts = { provider: 'scripted', model: 'test-model' }
const noChunks = (lines: string[]) => lines.filter((line) => !line.startsWith('assistant/chunk'))

describe('resume keeps what is parked parked (R-LIFE-7)', () => {
  it('steering pending at a crash stays parked until a wakeup, then is served first', async () => {
    const backend = new MemorySessionPersistence()
    const first = await spine({ model: { script: ['cut'] } })
    await first.root.plugin(memoryPersistence, { backend })
    const a = (await first.root.agents.create({ sessionId: id, agentOptions: opts })).agent
    const call = first.model.control()
    a.followup('first')
    await call.started
    a.steer('steer me later')
    await first.root.sessions.flush(a.session)
    // The process dies mid-turn: crash repair closes the open turn on load.
    const second = await spine({ model: { script: ['after wakeup'] } })
    await second.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const resumed = (await second.root.agents.resume({ resumeSessionId: id, agentOptions: opts })).agent
    await resumed.whenIdle()
    expect(second.model.calls).toBe(0)
    expect(resumed.inbox.nextStep).toHaveLength(1)
    resumed.steer('now')
    await resumed.whenIdle()
    expect(transcript(second.model.requests[0]!.messages).slice(-2)).toEqual(['user: steer me later', 'user: now'])
  })

  it('a fork child resumed later does not inherit the parent\'s pending items', async () => {
    const backend = new MemorySessionPersistence()
    const first = await spine({ model: { script: ['parent answer'] } })
    await first.root.plugin(memoryPersistence, { backend })
    const parent = (await first.root.agents.create({ sessionId: id, agentOptions: opts })).agent
    parent.followup('question')
    await parent.whenIdle()
    parent.queue('the parent\'s own pending work')
    const forked = first.root.sessions.fork(parent.session)
    const child = await first.root.agents.create({ sessionId: SessionId('child'), agentOptions: opts, meta: { parentSession: id }, seed: forked.events.slice(1) })
    expect(child.agent.inbox.nextTurn).toEqual([])
    await first.root.sessions.flush(child.agent.session)
    const second = await spine()
    await second.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const resumed = (await second.root.agents.resume({ resumeSessionId: SessionId('child'), agentOptions: opts })).agent
    expect(resumed.inbox).toEqual({ nextTurn: [], nextStep: [] })
  })

  it('a restored reasoning effort holds while the route does', async () => {
    const models = [{ id: 'test-model', reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low' }]
    const backend = new MemorySessionPersistence()
    const first = await spine({ model: { script: ['one'], models } })
    await first.root.plugin(memoryPersistence, { backend })
    const handle = await first.root.agents.create({ sessionId: id, agentOptions: { ...opts, reasoningEffort: 'high' } })
    handle.agent.followup('q')
    await handle.agent.whenIdle()
    await handle.dispose()
    const second = await spine({ model: { script: ['two', 'three'], models } })
    await second.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const resumed = (await second.root.agents.resume({ resumeSessionId: id, agentOptions: opts })).agent
    resumed.followup('q2')
    resumed.followup('q3')
    await resumed.whenIdle()
    expect(second.model.requests.map((request) => request.reasoningEffort)).toEqual(['high', 'high'])
  })

  it('the signal aborts a resume while it loads', async () => {
    const { root } = await spine()
    const gate = deferred()
    root.provide('sessionPersistence', { load: () => gate.promise, exists: async () => true } as never)
    const controller = new AbortController()
    const resuming = root.agents.resume({ resumeSessionId: id, signal: controller.signal })
    controller.abort()
    await expect(resuming).rejects.toMatchObject({ code: 'ABORTED' })
    gate.resolve()
  })
})

describe('injections wait for the start and for maintenance', () => {
  it('an inject() from an agent/created listener lands after agent/session-start', async () => {
    const { root } = await spine()
    const order: string[] = []
    root.on('agent/created', (agent) => void agent.inject('house rules'))
    root.on('agent/session-start', () => void order.push('session-start'))
    root.on('session/event', (_s, event) => void (event.type === 'turn/start' && order.push('turn/start')))
    const { agent } = await root.agents.create({ sessionId: id, agentOptions: opts })
    await agent.whenIdle()
    expect(order).toEqual(['session-start', 'turn/start'])
    expect(trace(agent.session)).toEqual(['turn/start 1 injection', 'user/message "house rules"', 'turn/end 1 completed'])
  })

  it('an inject() while maintenance runs waits for it to settle (maintenance is exclusive with turns)', async () => {
    const { agent } = await spine()
    const a = await agent()
    const gate = deferred()
    const maintenance = a.runMaintenance(async () => {
      a.inject('noted during maintenance')
      await gate.promise
      return trace(a.session).length
    })
    await settle()
    expect(trace(a.session)).toEqual([])
    gate.resolve()
    expect(await maintenance).toBe(0)
    await a.whenIdle()
    expect(trace(a.session)).toEqual(['turn/start 1 injection', 'user/message "noted during maintenance"', 'turn/end 1 completed'])
  })
})

describe('teardown at awkward moments', () => {
  it('dispose from an agent/status listener stops the drain before a turn opens', async () => {
    const { root, model } = await spine({ model: { script: ['never'] } })
    const handle = await root.agents.create({ sessionId: id, agentOptions: opts })
    root.on('agent/status', (_agent, status) => void (status === 'running' && handle.dispose()))
    handle.agent.steer('go')
    await handle.dispose()
    expect(model.calls).toBe(0)
    expect(trace(handle.agent.session)).toEqual(['inbox/enqueue next-step "go"', 'inbox/discard ×1'])
  })

  it('a setup that never settles does not hold up the loop\'s unload; the create rejects ABORTED', async () => {
    const { root, loop } = await spine()
    const creating = root.agents.create({ sessionId: id, agentOptions: opts, setup: () => new Promise(() => {}) })
    await settle()
    await loop.dispose()
    await expect(creating).rejects.toMatchObject({ code: 'ABORTED' })
    expect(root.agents.get(id)).toBeUndefined()
  })

  it('dispose() from a listener of the teardown itself returns the same promise', async () => {
    const { root } = await spine()
    const handle = await root.agents.create({ sessionId: id, agentOptions: opts })
    let inner: Promise<void> | undefined
    root.on('agent/inbox/discard', () => void (inner = handle.dispose()))
    handle.agent.queue('pending')
    const outer = handle.dispose()
    await outer
    expect(inner).toBe(outer)
  })
})

describe('cancel at awkward moments', () => {
  it('a cancel while agent/step-result is pending keeps the answer in an interrupted anchor', async () => {
    const { agent, root } = await spine({ model: { script: ['the whole answer'] } })
    const a = await agent()
    root.on('agent/step-result', async (_a, _t, _s, _message, signal) => {
      a.cancel({ kind: 'user' })
      throw signal.reason
    })
    a.followup('go')
    await a.whenIdle()
    expect(noChunks(trace(a.session)).slice(-3)).toEqual(['assistant/message "the whole answer" aborted interrupted', 'step/end 1.1', 'turn/end 1 aborted'])
  })

  it('a cancel during the claim means no prompt policy runs', async () => {
    const { agent, root } = await spine()
    const a = await agent()
    let policies = 0
    root.on('agent/prompt-submit', async (_a, _c, _s, _signal, next) => {
      policies++
      return next()
    })
    root.on('session/event', (_s, event) => void (event.type === 'inbox/dequeue' && a.cancel({ kind: 'user' })))
    a.followup('go')
    await a.whenIdle()
    expect(policies).toBe(0)
    expect(trace(a.session).at(-1)).toBe('turn/end 1 aborted')
  })

  it('a cancel from a listener of the closing turn\'s requeue still ends it aborted', async () => {
    const { agent, root } = await spine({ model: { script: ['x', 'y'] } })
    const a = await agent()
    root.on('agent/prompt-submit', async (_a, content, _s, _signal, next) => {
      if ((content[0] as { text: string }).text !== 'first') return next()
      a.steer('leftover')
      return { kind: 'block', reason: 'no' }
    })
    root.on('session/event', (_s, event) => void (event.type === 'inbox/requeue' && a.cancel({ kind: 'user' }, { keepInbox: true })))
    a.followup('first')
    await a.whenIdle()
    expect(trace(a.session).filter((line) => line.startsWith('turn/end'))[0]).toBe('turn/end 1 aborted')
  })

  it('pre-step may not enter one message twice', async () => {
    const { agent, root } = await spine()
    root.on('agent/pre-step', (_a, _t, _s, proposed) => ({ kind: 'enter', messages: [...proposed, ...proposed] }))
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(trace(a.session).at(-1)).toBe('turn/end 1 error INVALID_DECISION')
  })
})

describe('listener contracts', () => {
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
