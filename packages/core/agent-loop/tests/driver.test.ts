import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { SessionId, memoryPersistence, MemorySessionPersistence } from '@deepseek-ai/dsh-session'
import AgentLoop from '@deepseek-ai/dsh-agent-loop'
import { deferred, settle, spine, trace, transcript } from '@deepseek-ai/dsh-testkit'

const noChunks = (lines: string[]) => lines.filter((line) => !line.startsWith('assistant/chunk'))

describe('continuation (R-LOOP-4, R-LOOP-8)', () => {
  it('a continue reason becomes a steering message of the next step', async () => {
    const { agent, root, model } = await spine({ model: { script: ['draft', 'final'] } })
    let asked = false
    root.on('agent/turn-continuation', async (_a, _t, fallback, _s, next) => {
      const decision = await next()
      if (asked) return decision
      asked = true
      expect(fallback).toEqual({ kind: 'stop', by: 'default' })
      return { kind: 'continue', reason: 'Please double-check the answer.' }
    })
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(noChunks(trace(a.session)).slice(-7)).toEqual([
      'assistant/message "draft" stop',
      'step/end 1.1',
      'step/start 1.2',
      'steering/message "Please double-check the answer."',
      'assistant/message "final" stop',
      'step/end 1.2',
      'turn/end 1 completed',
    ])
    expect(transcript(model.requests[1]!.messages)).toEqual(['user: go', 'assistant: draft', 'user: Please double-check the answer.'])
  })

  it('a terminal stop closes the turn stopped{by}, drops pending steering, and drops steering that arrives until the flush', async () => {
    const { agent, root, model } = await spine({
      model: { script: [{ toolCalls: [{ name: 'nothing', arguments: {} }], answer: 'never sent' }, 'next turn'] },
    })
    const a = await agent()
    const gate = deferred()
    root.on('agent/turn-continuation', async () => {
      a.steer('pending at the decision')
      return { kind: 'stop', by: 'step-budget', terminal: true }
    })
    let checkpoints = 0
    root.on('session/flush', async (session) => {
      // The turn's checkpoint (not the admission's or the step's flush).
      if (session.events.at(-1)?.type === 'turn/end' && checkpoints++ === 0) {
        a.steer('arrives during the flush')
        await gate.promise
      }
    })
    a.followup('go')
    await settle()
    await settle()
    gate.resolve()
    await a.whenIdle()
    expect(noChunks(trace(a.session)).filter((l) => /^(turn|inbox|steering)/.test(l))).toEqual([
      'inbox/enqueue next-turn "go"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'inbox/enqueue next-step "pending at the decision"',
      'inbox/discard ×1',
      'turn/end 1 stopped by step-budget',
      'inbox/enqueue next-step "arrives during the flush"',
      'inbox/discard ×1',
    ])
    expect(model.calls).toBe(1)
  })

  it('turn-stopping may keep the turn going by steering', async () => {
    const { agent, root, model } = await spine({ model: { script: ['first', 'second'] } })
    const a = await agent()
    let once = false
    root.on('agent/turn-stopping', () => {
      if (!once) {
        once = true
        a.steer('one more thing')
      }
    })
    a.followup('go')
    await a.whenIdle()
    expect(model.calls).toBe(2)
    expect(noChunks(trace(a.session)).filter((l) => /^(step|turn|steering)/.test(l))).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'step/end 1.1',
      'step/start 1.2',
      'steering/message "one more thing"',
      'step/end 1.2',
      'turn/end 1 completed',
    ])
  })

  it('pre-step may replace the batch; a message it did not propose is logged as user/message', async () => {
    const { agent, root, model } = await spine({ model: { script: ['ok'] } })
    const { createUserMessage } = await import('@deepseek-ai/dsh-llm')
    root.on('agent/pre-step', (_a, _t, _s, proposed) => ({ kind: 'enter', messages: [createUserMessage('[system note]'), ...proposed] }))
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(noChunks(trace(a.session)).slice(3, 6)).toEqual(['step/start 1.1', 'user/message "[system note]"', 'user/message "go"'])
    expect(transcript(model.requests[0]!.messages)).toEqual(['user: [system note]', 'user: go'])
  })

  it('pre-step reject opens no step, writes nothing of the batch, discards its steering, and stops the turn', async () => {
    const { agent, root, model } = await spine({ model: { script: ['one'] } })
    const a = await agent()
    let steps = 0
    root.on('agent/pre-step', (_a, _t, step) => (++steps === 2 ? { kind: 'reject' } : undefined))
    root.on('agent/post-step', () => void a.steer('late steering'))
    a.followup('go')
    await a.whenIdle()
    expect(noChunks(trace(a.session)).slice(-4)).toEqual([
      'inbox/enqueue next-step "late steering"',
      'step/end 1.1',
      'inbox/discard ×1',
      'turn/end 1 stopped by pre-step',
    ])
    expect(model.calls).toBe(1)
  })

  it('there is no built-in turn budget: tool calls keep the turn going until the model stops', async () => {
    const rounds = Array.from({ length: 5 }, () => ({ toolCalls: [{ name: 'missing', arguments: {} }] }))
    const { agent, model } = await spine({ model: { script: [...rounds, 'done'] } })
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(model.calls).toBe(6)
    expect(trace(a.session).at(-1)).toBe('turn/end 1 completed')
  })
})

describe('status, whenIdle and maintenance (R-LOOP-5, R-LOOP-7)', () => {
  it('status flips to running once for consecutive turns and back to idle when nothing is pending', async () => {
    const { agent, root } = await spine({ model: { script: ['a', 'b'] } })
    const a = await agent()
    const statuses: string[] = []
    root.on('agent/status', (_agent, status) => void statuses.push(status))
    a.followup('one')
    a.followup('two')
    await a.whenIdle()
    expect(statuses).toEqual(['running', 'idle'])
    expect(a.status).toBe('idle')
  })

  it('whenIdle waits for the last flush; parked items do not keep it waiting', async () => {
    const { agent, root } = await spine({ model: { script: ['a'] } })
    const a = await agent()
    const gate = deferred()
    // The turn's checkpoint is held (the step's flush before the request is not).
    root.on('session/flush', (session) => (session.events.at(-1)?.type === 'turn/end' ? gate.promise : undefined))
    a.followup('one')
    let idle = false
    const waiting = a.whenIdle().then(() => (idle = true))
    await settle()
    await settle()
    expect(trace(a.session).at(-1)).toBe('turn/end 1 completed')
    expect(idle).toBe(false)
    gate.resolve()
    await waiting
    a.queue('parked')
    await a.whenIdle()
    expect(a.inbox.nextTurn).toHaveLength(1)
  })

  it('runMaintenance waits for the open turn and holds the next one until it settles', async () => {
    const { agent, model } = await spine({ model: { script: ['first', 'second'] } })
    const a = await agent()
    const order: string[] = []
    const call = model.control()
    a.followup('one')
    await call.started
    const gate = deferred()
    const maintenance = a.runMaintenance(async (signal) => {
      order.push(`maintenance starts (turns so far: ${trace(a.session).filter((l) => l.startsWith('turn/end')).length})`)
      a.followup('two')
      await gate.promise
      order.push(`maintenance ends (turns so far: ${trace(a.session).filter((l) => l.startsWith('turn/end')).length}, aborted: ${signal.aborted})`)
      return 42
    })
    await call.release()
    await settle()
    await settle()
    gate.resolve()
    expect(await maintenance).toBe(42)
    await a.whenIdle()
    expect(order).toEqual(['maintenance starts (turns so far: 1)', 'maintenance ends (turns so far: 1, aborted: false)'])
    expect(model.calls).toBe(2)
  })

  it('maintenance is refused after dispose, and a running one sees its signal abort', async () => {
    const { root } = await spine()
    const handle = await root.agents.create({ sessionId: SessionId('m'), agentOptions: { provider: 'scripted', model: 'x' } })
    const started = deferred()
    const running = handle.agent.runMaintenance(
      (signal) =>
        new Promise((resolve) => {
          started.resolve()
          signal.addEventListener('abort', () => resolve('aborted'))
        }),
    )
    await started.promise
    await handle.dispose()
    expect(await running).toBe('aborted')
    await expect(handle.agent.runMaintenance(async () => 1)).rejects.toMatchObject({ code: 'DISPOSED' })
    expect(() => handle.agent.followup('late')).toThrow(expect.objectContaining({ code: 'DISPOSED' }))
  })
})

describe('config agents (R-LIFE-9)', () => {
  async function loopWith(agents: unknown[], backend?: MemorySessionPersistence) {
    const { root, loop } = await spine()
    await loop.dispose()
    if (backend) await root.plugin(memoryPersistence, { backend })
    const failures: Array<[string, string]> = []
    root.on('agent-loop/config-start-failed', (id, error) => void failures.push([id, (error as { code?: string }).code ?? String(error)]))
    const created: string[] = []
    root.on('agent/created', (agent) => void created.push(agent.id))
    const fiber = root.plugin(AgentLoop, { agents: agents as never })
    await fiber
    await settle()
    await settle()
    return { root, failures, created, fiber }
  }

  it('starts a fresh ${id}-session-<uuid> agent, with its cwd, owned by the loop', async () => {
    const { root, created, fiber } = await loopWith([{ id: 'helper', provider: 'scripted', model: 'x', cwd: '/srv' }])
    expect(created).toHaveLength(1)
    expect(created[0]).toMatch(/^helper-session-[0-9a-f-]{36}$/)
    const agent = root.agents.get(created[0]!)!
    expect(agent.session.meta.cwd).toBe('/srv')
    expect(agent.options).toEqual({ provider: 'scripted', model: 'x' })
    await fiber.dispose()
    expect(root.agents.get(created[0]!)).toBeUndefined()
  })

  it('sessionId creates fresh when nothing is persisted, and resumes when it is', async () => {
    const backend = new MemorySessionPersistence()
    const first = await loopWith([{ id: 'x', sessionId: 'stable', provider: 'scripted', model: 'x' }], backend)
    expect(first.created).toEqual(['stable'])
    const agent = first.root.agents.get('stable')!
    agent.queue('remember me')
    await first.root.sessions.flush(agent.session)
    const second = await loopWith([{ id: 'x', sessionId: 'stable' }], backend.reopen())
    expect(second.created).toEqual(['stable'])
    expect(second.root.agents.get('stable')!.inbox.nextTurn.map((m) => (m.content[0] as { text: string }).text)).toEqual(['remember me'])
  })

  it('refuses sessionId with resumeSessionId, and a resumeSessionId that does not exist, without stopping the loop', async () => {
    const { failures, created, root } = await loopWith(
      [
        { id: 'both', sessionId: 's1', resumeSessionId: 's2' },
        { id: 'missing', resumeSessionId: 'nowhere' },
        { id: 'fine' },
      ],
      new MemorySessionPersistence(),
    )
    expect(failures).toEqual([
      ['s1', 'INVALID_OPTIONS'],
      ['nowhere', 'SESSION_NOT_FOUND'],
    ])
    expect(created).toHaveLength(1)
    expect(root.agents.list()).toHaveLength(1)
  })

  it('a resumeSessionId without persistence fails with NO_PERSISTENCE', async () => {
    const { failures } = await loopWith([{ id: 'r', resumeSessionId: 'old' }])
    expect(failures).toEqual([['old', 'NO_PERSISTENCE']])
  })

  it('refuses a malformed config with a clear error', async () => {
    const root = new Context()
    expect(() => AgentLoop.Config({ maxParallelToolCalls: 0, agents: [] } as never)).toThrow()
    expect(() => AgentLoop.Config({ agents: [{ provider: 'x' }] } as never)).toThrow(/id/)
    void root
  })
})

describe('the drain', () => {
  it('runs thousands of queued follow-ups, each in its own turn and in order, when every turn ends without waiting', async () => {
    // A scripted model whose chunks are at hand and nobody listening: each turn closes inside the drain's
    // round, and the drain must take the next one in its loop (a drain that recursed would overflow the stack).
    const { agent } = await spine({ model: { record: false, respond: () => ({ text: ['ok'] }) } })
    const a = await agent()
    const count = 3000
    for (let i = 0; i < count; i++) a.queue(`q${i}`)
    a.followup('last')
    await a.whenIdle()
    const turns = a.session.events.filter((event) => event.type === 'turn/end')
    expect(turns.length).toBe(count + 1)
    expect(turns.every((event) => event.type === 'turn/end' && event.data.reason.kind === 'completed')).toBe(true)
    const prompts = a.session.events.flatMap((event) => (event.type === 'user/message' ? [transcript([event.data.message])[0]] : []))
    expect(prompts.slice(0, 2)).toEqual(['user: q0', 'user: q1'])
    expect(prompts.at(-1)).toBe('user: last')
    expect(a.status).toBe('idle')
  })
})
