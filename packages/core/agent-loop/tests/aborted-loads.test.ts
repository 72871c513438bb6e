import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import type { AgentHandle } from '@deepseek-ai/dsh-agent'
import { SESSION_FORMAT_VERSION, SessionId, type LoadedSession, type SessionPersistence } from '@deepseek-ai/dsh-session'
import { deferred, settle, spine } from '@deepseek-ai/dsh-testkit'

const id = SessionId('a')
const opts = { provider: 'scripted', model: 'test-model' }

/** A persisted log of `a`: what the held-open load finally returns. */
const loadedA: LoadedSession = {
  id,
  events: [{ type: 'session/meta', seq: 0, time: 1, data: { createdAt: 1, version: SESSION_FORMAT_VERSION } }],
  repairs: [],
  warnings: [],
}

/** A persistence backend whose `load` the test holds open until it settles it. */
function heldLoad(root: Context) {
  const load = deferred<LoadedSession>()
  const started = deferred()
  const backend: Pick<SessionPersistence, 'load' | 'exists'> = {
    load: () => {
      started.resolve()
      return load.promise
    },
    exists: async () => true,
  }
  root.provide('sessionPersistence', backend as SessionPersistence)
  return { load, started: started.promise }
}

/** Every lifecycle notification, in order. */
function lifecycleLog(root: Context) {
  const log: string[] = []
  root.on('session/created', (s) => void log.push(`session/created ${s.id}`))
  root.on('session/disposed', (s) => void log.push(`session/disposed ${s.id}`))
  root.on('agent/created', (a) => void log.push(`agent/created ${a.id}`))
  root.on('agent/disposed', (a) => void log.push(`agent/disposed ${a.id}`))
  root.on('agent/session-start', (a, source) => void log.push(`agent/session-start ${a.id} ${source}`))
  return log
}

/** A plugin that starts `start(ctx)` in its apply and keeps the promise. */
async function ownerOf<T>(root: Context, start: (ctx: Context) => Promise<T>) {
  let call!: Promise<T>
  const fiber = root.plugin({
    inject: ['agents'],
    apply: (ctx: Context) => {
      call = start(ctx)
      call.catch(() => {})
    },
  })
  await fiber
  return { fiber, call }
}

describe('R-LIFE-6: an unload aborts a pending resume at once', () => {
  it('R-LIFE-6: an owner that unloads while resume waits on a hung load: ABORTED at once naming the owner, the id is free, the late load publishes nothing', async () => {
    const { root } = await spine()
    const held = heldLoad(root)
    const log = lifecycleLog(root)
    const owner = await ownerOf(root, (ctx) => ctx.agents.resume({ resumeSessionId: id, agentOptions: opts }))
    await held.started
    // The load still hangs: the owner's unload completes, and the call rejects, without it.
    await owner.fiber.dispose()
    await expect(owner.call).rejects.toMatchObject({
      name: 'AgentError',
      code: 'ABORTED',
      message: 'resume("a") was aborted before the agent was published: its owner unloaded',
    })
    const again = await root.agents.create({ sessionId: id, agentOptions: opts })
    held.load.resolve(loadedA)
    await settle()
    expect(log).toEqual(['session/created a', 'agent/created a', 'agent/session-start a startup'])
    expect([root.agents.list(), root.sessions.list()]).toEqual([[again.agent], [again.agent.session]])
  })

  it('R-LIFE-6: a hung load that rejects after its owner left is dropped without an unhandled rejection', async () => {
    const { root } = await spine()
    const held = heldLoad(root)
    const owner = await ownerOf(root, (ctx) => ctx.agents.resume({ resumeSessionId: id, agentOptions: opts }))
    await held.started
    await owner.fiber.dispose()
    await expect(owner.call).rejects.toMatchObject({ code: 'ABORTED' })
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => void unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      held.load.reject(new Error('disk gone'))
      await settle()
      await settle()
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
    expect(unhandled).toEqual([])
    expect(root.sessions.list()).toEqual([])
  })

  it('R-LIFE-6: the loop unloading while resume waits on a hung load: the unload completes, the call rejects ABORTED naming the loop, the late load publishes nothing', async () => {
    const { root, loop } = await spine()
    const held = heldLoad(root)
    const log = lifecycleLog(root)
    const resuming = root.agents.resume({ resumeSessionId: id, agentOptions: opts })
    resuming.catch(() => {})
    await held.started
    await loop.dispose()
    await expect(resuming).rejects.toMatchObject({ code: 'ABORTED', message: 'resume("a") was aborted before the agent was published: the agent loop unloaded' })
    held.load.resolve(loadedA)
    await settle()
    expect(log).toEqual([])
    expect(root.sessions.list()).toEqual([])
  })

  it('R-LIFE-6: an owner already unloading when it calls gets ABORTED, not Cordis\' INACTIVE_EFFECT', async () => {
    const { root } = await spine()
    heldLoad(root)
    const calls: Promise<AgentHandle>[] = []
    const owner = root.plugin({
      inject: ['agents'],
      apply: (ctx: Context) => {
        ctx.effect(() => () => {
          // Called from the owner's own teardown: its fiber is already unloading.
          const call = ctx.agents.resume({ resumeSessionId: id, agentOptions: opts })
          call.catch(() => {})
          calls.push(call)
        })
      },
    })
    await owner
    await owner.dispose()
    expect(calls).toHaveLength(1)
    await expect(calls[0]).rejects.toMatchObject({ code: 'ABORTED', message: 'resume("a") was refused: its owner (the calling context) is unloading' })
    expect(root.sessions.list()).toEqual([])
  })
})

describe('R-LIFE-1: a rollback names its cause', () => {
  it('R-LIFE-1: the owner unloading during setup: ABORTED naming the owner (not "its signal"), and the setup is abandoned at once', async () => {
    const { root } = await spine()
    const log = lifecycleLog(root)
    const setupGate = deferred()
    const owner = await ownerOf(root, (ctx) => ctx.agents.create({ sessionId: id, agentOptions: opts, setup: () => setupGate.promise }))
    await owner.fiber.dispose()
    await expect(owner.call).rejects.toMatchObject({ code: 'ABORTED', message: 'create("a") was aborted before the agent was published: its owner unloaded' })
    setupGate.resolve()
    await settle()
    expect(log).toEqual([])
    expect(root.agents.list()).toEqual([])
  })

  it('R-LIFE-1: the loop unloading during setup: ABORTED naming the loop', async () => {
    const { root, loop } = await spine()
    const setupStarted = deferred()
    const creating = root.agents.create({ sessionId: id, agentOptions: opts, setup: () => (setupStarted.resolve(), new Promise<void>(() => {})) })
    creating.catch(() => {})
    await setupStarted.promise
    await loop.dispose()
    await expect(creating).rejects.toMatchObject({ code: 'ABORTED', message: 'create("a") was aborted before the agent was published: the agent loop unloaded' })
  })

  it("R-LIFE-1: the caller's signal: ABORTED saying so, with the signal's reason as cause", async () => {
    const { root } = await spine()
    const held = heldLoad(root)
    const controller = new AbortController()
    const resuming = root.agents.resume({ resumeSessionId: id, agentOptions: opts, signal: controller.signal })
    await held.started
    const reason = new Error('user pressed Esc')
    controller.abort(reason)
    await expect(resuming).rejects.toMatchObject({ code: 'ABORTED', message: 'resume("a") was aborted before the agent was published: its signal aborted', cause: reason })
  })

  it('R-LIFE-1: a setup that fails rejects with its own error; an owner that unloads in agent/created rolls back naming the owner', async () => {
    const { root } = await spine()
    await expect(root.agents.create({ sessionId: id, agentOptions: opts, setup: () => Promise.reject(new Error('setup broke')) })).rejects.toThrow('setup broke')
    const log = lifecycleLog(root)
    let owner!: ReturnType<Context['plugin']>
    root.on('agent/created', () => void owner.dispose())
    let creating!: Promise<AgentHandle>
    owner = root.plugin({ inject: ['agents'], apply: (ctx: Context) => void (creating = ctx.agents.create({ sessionId: id, agentOptions: opts })) })
    await owner
    await expect(creating).rejects.toMatchObject({ code: 'ABORTED', message: 'create("a") was rolled back: its owner unloaded while agent "a" was being announced' })
    expect(log).toEqual(['session/created a', 'agent/created a', 'agent/disposed a', 'session/disposed a'])
  })
})
