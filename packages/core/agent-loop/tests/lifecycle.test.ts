import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { SessionId, memoryPersistence, MemorySessionPersistence } from '@deepseek-ai/dsh-session'
import { deferred, spine, trace, transcript } from '@deepseek-ai/dsh-testkit'

const id = SessionId('a')
const opts = { provider: 'scripted', model: 'test-model' }

/** Records the lifecycle events of every session/agent, in order. */
function lifecycleLog(root: Context) {
  const log: string[] = []
  root.on('session/created', (s) => void log.push(`session/created ${s.id}`))
  root.on('session/disposed', (s) => void log.push(`session/disposed ${s.id}`))
  root.on('agent/created', (a) => void log.push(`agent/created ${a.id}`))
  root.on('agent/disposed', (a) => void log.push(`agent/disposed ${a.id}`))
  root.on('agent/session-start', (a, source) => void log.push(`agent/session-start ${a.id} ${source}`))
  return log
}

describe('create (R-LIFE-1…3)', () => {
  it('runs setup on the unpublished agent, then publishes session and agent, then session-start', async () => {
    const { root } = await spine()
    const log = lifecycleLog(root)
    const seenInSetup: unknown[] = []
    const handle = await root.agents.create({
      sessionId: id,
      agentOptions: opts,
      setup: async (ctx) => {
        seenInSetup.push(root.agents.get(id), root.sessions.get(id))
        log.push('setup')
        ctx.on('agent/created', (agent) => void log.push(`scoped:agent/created ${agent.id}`))
      },
    })
    expect(seenInSetup).toEqual([undefined, undefined])
    expect(log).toEqual(['setup', 'session/created a', 'agent/created a', 'scoped:agent/created a', 'agent/session-start a startup'])
    expect(root.agents.get(id)).toBe(handle.agent)
    expect(root.sessions.get(id)).toBe(handle.agent.session)
  })

  it('an agent/created listener may already send input; the driver starts only after session-start', async () => {
    const { root, model } = await spine({ model: { script: ['welcome'] } })
    const order: string[] = []
    root.on('agent/created', (agent) => {
      agent.followup('greet the user')
      order.push('created+followup')
    })
    root.on('agent/session-start', () => void order.push('session-start'))
    root.on('agent/status', (_agent, status) => void order.push(`status ${status}`))
    const { agent } = await root.agents.create({ sessionId: id, agentOptions: opts })
    await agent.whenIdle()
    expect(order).toEqual(['created+followup', 'session-start', 'status running', 'status idle'])
    expect(model.calls).toBe(1)
  })

  it('input sent during a vetoed publication is dropped with the session', async () => {
    const { root, model } = await spine({ model: { script: ['never'] } })
    root.on('agent/created', (agent) => void agent.followup('too early'))
    root.on('agent/created', () => {
      throw new Error('veto')
    })
    await expect(root.agents.create({ sessionId: id, agentOptions: opts })).rejects.toThrow('veto')
    await new Promise((resolve) => setImmediate(resolve))
    expect(model.calls).toBe(0)
    expect(root.sessions.get(id)).toBeUndefined()
  })

  it('agent.ctx sees every service of the factory even when the caller injected only agents', async () => {
    const { root, model } = await spine({ model: { script: [{ toolCalls: [{ name: 'local', arguments: {} }], answer: 'ok' }] } })
    let handleAgent: import('@deepseek-ai/dsh-agent').Agent | undefined
    await root.plugin({
      inject: ['agents'],
      apply: async (ctx: Context) => {
        const handle = await ctx.agents.create({
          sessionId: id,
          agentOptions: opts,
          setup: (scoped) => {
            scoped.tools.register(defineTool({ name: 'local', description: 'agent-local', parameters: z.object({}), execute: () => 'local result' }))
          },
        })
        handleAgent = handle.agent
      },
    })
    handleAgent!.followup('go')
    await handleAgent!.whenIdle()
    expect(model.requests[0]!.tools?.map((t) => t.name)).toEqual(['local'])
    expect(root.tools.schemas().map((t) => t.name)).toEqual([])
    expect(transcript(model.requests[1]!.messages).at(-1)).toBe('user: result local result')
  })

  it('borrows options read-only', async () => {
    const { root } = await spine()
    const agentOptions = { provider: 'scripted', model: 'test-model', reasoningEffort: undefined }
    const { agent } = await root.agents.create({ sessionId: id, agentOptions })
    expect(agent.options).toEqual(agentOptions)
    expect(Object.isFrozen(agent.options)).toBe(true)
  })
})

describe('rollback (R-LIFE-1, R-LIFE-3)', () => {
  it('a setup rejection rolls everything back and publishes no id', async () => {
    const { root } = await spine()
    const log = lifecycleLog(root)
    let scopedListenerCalls = 0
    await expect(
      root.agents.create({
        sessionId: id,
        agentOptions: opts,
        setup: (ctx) => {
          ctx.on('session/event', () => void scopedListenerCalls++)
          throw new Error('setup broke')
        },
      }),
    ).rejects.toThrow('setup broke')
    expect(log).toEqual([])
    expect(root.agents.get(id)).toBeUndefined()
    expect(root.sessions.get(id)).toBeUndefined()
    // The scope was revoked: a later agent with the same id does not feed the dead listener.
    const { agent } = await root.agents.create({ sessionId: id, agentOptions: opts })
    agent.queue('x')
    expect(scopedListenerCalls).toBe(0)
  })

  it('a vetoing session/created listener rolls back with a paired session/disposed', async () => {
    const { root } = await spine()
    const log = lifecycleLog(root)
    const veto = root.on('session/created', () => {
      throw new Error('veto session')
    })
    await expect(root.agents.create({ sessionId: id, agentOptions: opts })).rejects.toThrow('veto session')
    expect(log).toEqual(['session/created a', 'session/disposed a'])
    expect(root.sessions.get(id)).toBeUndefined()
    veto()
    await expect(root.agents.create({ sessionId: id, agentOptions: opts })).resolves.toBeDefined()
  })

  it('a vetoing agent/created listener rolls back session and agent, each paired', async () => {
    const { root } = await spine()
    const log = lifecycleLog(root)
    root.on('agent/created', () => {
      throw new Error('veto agent')
    })
    await expect(root.agents.create({ sessionId: id, agentOptions: opts })).rejects.toThrow('veto agent')
    expect(log).toEqual(['session/created a', 'agent/created a', 'agent/disposed a', 'session/disposed a'])
    expect(root.agents.get(id)).toBeUndefined()
    expect(root.sessions.get(id)).toBeUndefined()
  })

  it('the signal aborting during setup rolls back; once the handle is returned the signal no longer matters', async () => {
    const { root } = await spine()
    const log = lifecycleLog(root)
    const controller = new AbortController()
    const gate = deferred()
    const creating = root.agents.create({ sessionId: id, agentOptions: opts, signal: controller.signal, setup: () => gate.promise })
    controller.abort()
    await expect(creating).rejects.toMatchObject({ code: 'ABORTED' })
    gate.resolve()
    expect(log).toEqual([])
    const later = new AbortController()
    const handle = await root.agents.create({ sessionId: id, agentOptions: opts, signal: later.signal })
    later.abort()
    expect(root.agents.get(id)).toBe(handle.agent)
  })

  it('an already aborted signal rejects before anything is built', async () => {
    const { root } = await spine()
    await expect(root.agents.create({ sessionId: id, agentOptions: opts, signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'ABORTED' })
  })

  it('the owner disposing during setup rolls back', async () => {
    const { root } = await spine()
    const log = lifecycleLog(root)
    const gate = deferred()
    let creating!: Promise<unknown>
    const owner = root.plugin({
      inject: ['agents'],
      apply: (ctx: Context) => {
        creating = ctx.agents.create({ sessionId: id, agentOptions: opts, setup: () => gate.promise })
        creating.catch(() => {})
      },
    })
    await owner
    const disposing = owner.dispose()
    gate.resolve()
    await expect(creating).rejects.toMatchObject({ code: 'ABORTED' })
    await disposing
    expect(log).toEqual([])
    expect(root.agents.get(id)).toBeUndefined()
  })
})

describe('identity and teardown (R-LIFE-4…6)', () => {
  it('two concurrent creates with one id both prepare; the final enter decides; the loser rolls back', async () => {
    const { root } = await spine()
    const log = lifecycleLog(root)
    const first = deferred()
    const second = deferred()
    const setups: string[] = []
    const a = root.agents.create({ sessionId: id, agentOptions: opts, setup: async () => { setups.push('first'); await first.promise } })
    const b = root.agents.create({ sessionId: id, agentOptions: opts, setup: async () => { setups.push('second'); await second.promise } })
    await new Promise((resolve) => setImmediate(resolve))
    expect(setups).toEqual(['first', 'second'])
    second.resolve()
    const winner = await b
    first.resolve()
    await expect(a).rejects.toMatchObject({ code: 'DUPLICATE_ID' })
    expect(root.agents.get(id)).toBe(winner.agent)
    expect(log).toEqual(['session/created a', 'agent/created a', 'agent/session-start a startup'])
  })

  it('R-LIFE-4: an owner disposed during the created notification tears down after the dispatch unwinds, keeping created/disposed paired; the agent never starts and create rejects', async () => {
    const { root } = await spine()
    const log = lifecycleLog(root)
    let owner!: ReturnType<Context['plugin']>
    let disposing: Promise<void> | undefined
    root.on('agent/created', () => {
      disposing ??= owner.dispose()
      log.push('listener disposed the owner')
    })
    root.on('agent/created', () => void log.push('later created listener'))
    let created: Promise<unknown> | undefined
    owner = root.plugin({ inject: ['agents'], apply: (ctx: Context) => void (created = ctx.agents.create({ sessionId: id, agentOptions: opts })) })
    await owner
    await expect(created).rejects.toMatchObject({ code: 'ABORTED' })
    await disposing
    expect(log).toEqual([
      'session/created a',
      'agent/created a',
      'listener disposed the owner',
      'later created listener',
      'agent/disposed a',
      'session/disposed a',
    ])
    expect(root.agents.get(id)).toBeUndefined()
    expect(root.sessions.get(id)).toBeUndefined()
  })

  it('teardown order: drain, agent/disposed, session/disposed, then the scope is revoked; dispose is memoized', async () => {
    const { root, model } = await spine({ model: { script: ['x'] } })
    const log = lifecycleLog(root)
    const handle = await root.agents.create({
      sessionId: id,
      agentOptions: opts,
      setup: (ctx) => {
        ctx.on('agent/disposed', () => void log.push('scoped saw agent/disposed'))
        ctx.on('session/disposed', () => void log.push('scoped saw session/disposed'))
        ctx.effect(() => () => void log.push('scope revoked'))
      },
    })
    const call = model.control()
    handle.agent.followup('go')
    await call.started
    const one = handle.dispose()
    const two = handle.dispose()
    expect(two).toBe(one)
    await one
    expect(log.slice(3)).toEqual([
      'agent/disposed a',
      'scoped saw agent/disposed',
      'session/disposed a',
      'scoped saw session/disposed',
      'scope revoked',
    ])
    expect(trace(handle.agent.session).slice(-3)).toEqual(['assistant/message "" aborted interrupted', 'step/end 1.1', 'turn/end 1 aborted'])
  })

  it('the signal aborting during the created notification rolls back like an owner unload: create rejects ABORTED, created/disposed paired, no id left (R-LIFE-1)', async () => {
    const { root } = await spine()
    const log = lifecycleLog(root)
    const controller = new AbortController()
    root.on('agent/created', () => {
      controller.abort(new Error('the person gave up'))
      log.push('listener aborted the signal')
    })
    const created = root.agents.create({ sessionId: id, agentOptions: opts, signal: controller.signal })
    await expect(created).rejects.toMatchObject({ code: 'ABORTED' })
    expect(log).toEqual(['session/created a', 'agent/created a', 'listener aborted the signal', 'agent/disposed a', 'session/disposed a'])
    expect(root.agents.get(id)).toBeUndefined()
    expect(root.sessions.get(id)).toBeUndefined()
  })

  it('the id is reusable once detach completes, even while the private scope is still cleaning up', async () => {
    const { root } = await spine()
    const slow = deferred()
    const handle = await root.agents.create({ sessionId: id, agentOptions: opts, setup: (ctx) => void ctx.effect(() => () => slow.promise) })
    const detached = deferred()
    root.on('session/disposed', () => detached.resolve())
    const disposing = handle.dispose()
    await detached.promise
    const again = await root.agents.create({ sessionId: id, agentOptions: opts })
    expect(root.agents.get(id)).toBe(again.agent)
    slow.resolve()
    await disposing
    expect(root.agents.get(id)).toBe(again.agent)
  })

  it('owner unload disposes the agent through the same boundary', async () => {
    const { root } = await spine()
    const log = lifecycleLog(root)
    let handle!: import('@deepseek-ai/dsh-agent').AgentHandle
    const owner = root.plugin({ inject: ['agents'], apply: async (ctx: Context) => void (handle = await ctx.agents.create({ sessionId: id, agentOptions: opts })) })
    await owner
    await owner.dispose()
    expect(log.slice(-2)).toEqual(['agent/disposed a', 'session/disposed a'])
    await handle.dispose()
    expect(log.filter((l) => l.includes('disposed'))).toHaveLength(2)
  })

  it('provider unload tears agents down in order and stops create calls under way at once; nothing publishes after', async () => {
    const { root, loop } = await spine()
    const log = lifecycleLog(root)
    const live = await root.agents.create({ sessionId: id, agentOptions: opts, setup: (ctx) => void ctx.on('agent/disposed', () => void log.push('scoped saw agent/disposed')) })
    // A resume still loading when the loop unloads: it is aborted at once (the unload does not
    // wait for the hung load), and the load settling later publishes nothing.
    const gate = deferred<{ events: never[] }>()
    root.provide('sessionPersistence', { load: () => gate.promise, exists: async () => true } as never)
    const pending = root.agents.resume({ resumeSessionId: SessionId('b'), agentOptions: opts })
    pending.catch(() => {})
    await new Promise((resolve) => setImmediate(resolve))
    await loop.dispose()
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED', message: 'resume("b") was aborted before the agent was published: the agent loop unloaded' })
    gate.resolve({ events: [] })
    await new Promise((resolve) => setImmediate(resolve))
    expect(log.slice(3)).toEqual(['agent/disposed a', 'scoped saw agent/disposed', 'session/disposed a'])
    expect(root.agents.get(SessionId('b'))).toBeUndefined()
    expect(root.sessions.list()).toEqual([])
    await live.dispose()
  })
})

describe('sync create and seeds (R-LIFE-8, R-SES-6)', () => {
  it('ctx.agentLoop.create publishes synchronously and is released with the calling fiber', async () => {
    const { root } = await spine({ model: { script: ['hi'] } })
    const log = lifecycleLog(root)
    let agent!: import('@deepseek-ai/dsh-agent').Agent
    const owner = root.plugin({ inject: ['agentLoop'], apply: (ctx: Context) => void (agent = ctx.agentLoop.create('sync', opts, { cwd: '/work' })) })
    await owner
    expect(log).toEqual(['session/created sync', 'agent/created sync', 'agent/session-start sync startup'])
    expect(agent.session.meta.cwd).toBe('/work')
    agent.followup('hello')
    await agent.whenIdle()
    await owner.dispose()
    expect(log.slice(-2)).toEqual(['agent/disposed sync', 'session/disposed sync'])
  })

  it('a fork seed becomes the child\'s frozen prefix and the model sees it first', async () => {
    const { root, model } = await spine({ model: { script: ['parent answer', 'child answer'] } })
    const parent = (await root.agents.create({ sessionId: id, agentOptions: opts })).agent
    parent.followup('parent question')
    await parent.whenIdle()
    const forked = root.sessions.fork(parent.session)
    const child = (
      await root.agents.create({ sessionId: SessionId('child'), agentOptions: opts, meta: { parentSession: parent.id }, seed: forked.events.slice(1) })
    ).agent
    expect(child.session.meta.parentSession).toBe('a')
    child.followup('child question')
    await child.whenIdle()
    expect(transcript(model.requests[1]!.messages)).toEqual(['user: parent question', 'assistant: parent answer', 'user: child question'])
    expect(trace(child.session).filter((l) => l.startsWith('turn/start'))).toEqual(['turn/start 1 prompt', 'turn/start 2 prompt'])
  })
})

describe('resume (R-LIFE-7, R-LOOP-6)', () => {
  async function persisted() {
    const backend = new MemorySessionPersistence()
    const first = await spine({ model: { script: ['one'] } })
    await first.root.plugin(memoryPersistence, { backend })
    return { backend, first }
  }

  it('rejects NO_PERSISTENCE without a backend and SESSION_NOT_FOUND for an unknown id', async () => {
    const { root } = await spine()
    await expect(root.agents.resume({ resumeSessionId: id })).rejects.toMatchObject({ code: 'NO_PERSISTENCE' })
    await root.plugin(memoryPersistence)
    await expect(root.agents.resume({ resumeSessionId: id })).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
  })

  it('continues turn numbering and history, and rebuilds the durable inbox parked', async () => {
    const { backend, first } = await persisted()
    const handle = await first.root.agents.create({ sessionId: id, agentOptions: opts })
    handle.agent.followup('first question')
    await handle.agent.whenIdle()
    const parked = handle.agent.queue('parked for later')
    await first.root.sessions.flush(handle.agent.session)
    // A crash: the process dies without disposing (the backend keeps what was flushed).
    const second = await spine({ model: { script: ['two', 'three'] } })
    await second.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const log = lifecycleLog(second.root)
    const resumed = (await second.root.agents.resume({ resumeSessionId: id, agentOptions: opts })).agent
    expect(log).toEqual(['session/created a', 'agent/created a', 'agent/session-start a resume'])
    expect(resumed.inbox.nextTurn.map((m) => m.id)).toEqual([parked])
    await resumed.whenIdle()
    expect(second.model.calls).toBe(0)
    resumed.followup('second question')
    await resumed.whenIdle()
    expect(trace(resumed.session).filter((l) => l.startsWith('turn/start'))).toEqual([
      'turn/start 1 prompt',
      'turn/start 2 prompt',
      'turn/start 3 prompt',
    ])
    expect(transcript(second.model.requests[0]!.messages)).toEqual(['user: first question', 'assistant: one', 'user: parked for later'])
  })

  it('restores the logged reasoning effort only on the same route', async () => {
    const models = [{ id: 'test-model', reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low' }, { id: 'other', reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low' }]
    const backend = new MemorySessionPersistence()
    const first = await spine({ model: { script: ['one'], models } })
    await first.root.plugin(memoryPersistence, { backend })
    const handle = await first.root.agents.create({ sessionId: id, agentOptions: { ...opts, reasoningEffort: 'high' } })
    handle.agent.followup('q')
    await handle.agent.whenIdle()
    await handle.dispose()

    const same = await spine({ model: { script: ['two'], models } })
    await same.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const resumed = (await same.root.agents.resume({ resumeSessionId: id, agentOptions: opts })).agent
    resumed.followup('q2')
    await resumed.whenIdle()
    expect(same.model.requests[0]!.reasoningEffort).toBe('high')
    expect(resumed.session.events.filter((e) => e.type === 'request/header').map((e) => e.type === 'request/header' && [e.data.reason, e.data.reasoningEffort])).toEqual([
      ['initial', 'high'],
    ])

    const other = await spine({ model: { script: ['three'], models } })
    await other.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const moved = (await other.root.agents.resume({ resumeSessionId: id, agentOptions: { provider: 'scripted', model: 'other' } })).agent
    moved.followup('q3')
    await moved.whenIdle()
    expect(other.model.requests[0]!.reasoningEffort).toBe('low')
    expect(moved.session.events.filter((e) => e.type === 'request/header').map((e) => e.type === 'request/header' && [e.data.reason, e.data.model, e.data.reasoningEffort])).toEqual([
      ['initial', 'test-model', 'high'],
      ['resume', 'other', 'low'],
    ])
  })

  it('a resume with the same max tokens and temperature logs no new header; a changed one logs a resume header', async () => {
    const backend = new MemorySessionPersistence()
    const sampling = (maxTokens: number, temperature: number) => async (world: Awaited<ReturnType<typeof spine>>) => {
      await world.root.plugin(memoryPersistence, { backend: backend.reopen() })
      world.root.on('agent/request', async (_agent, _turn, _step, _config, _signal, next) => ({ ...(await next()), maxTokens, temperature }))
    }
    const headers = (session: { events: readonly { type: string; data: unknown }[] }) =>
      session.events.filter((e) => e.type === 'request/header').map((e) => {
        const data = e.data as { reason: string; maxTokens?: number; temperature?: number }
        return [data.reason, data.maxTokens, data.temperature]
      })

    const first = await spine({ model: { script: ['one'] } })
    await sampling(256, 0.5)(first)
    const handle = await first.root.agents.create({ sessionId: id, agentOptions: opts })
    handle.agent.followup('q')
    await handle.agent.whenIdle()
    await handle.dispose()

    const same = await spine({ model: { script: ['two'] } })
    await sampling(256, 0.5)(same)
    const resumed = await same.root.agents.resume({ resumeSessionId: id, agentOptions: opts })
    resumed.agent.followup('q2')
    await resumed.agent.whenIdle()
    expect(same.model.requests[0]).toMatchObject({ maxTokens: 256, temperature: 0.5 })
    expect(headers(resumed.agent.session)).toEqual([['initial', 256, 0.5]])
    await resumed.dispose()

    const changed = await spine({ model: { script: ['three'] } })
    await sampling(256, 0)(changed)
    const again = (await changed.root.agents.resume({ resumeSessionId: id, agentOptions: opts })).agent
    again.followup('q3')
    await again.whenIdle()
    expect(headers(again.session)).toEqual([
      ['initial', 256, 0.5],
      ['resume', 256, 0],
    ])
  })
})
