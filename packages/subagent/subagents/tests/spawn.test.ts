import { settle } from '@deepseek-ai/dsh-testkit'
import { Context } from 'cordis'
import { afterEach, describe, expect, it } from 'vitest'
import Subagents, { SUBAGENT_SECTION, SubagentsError } from '../src'
import { Gates, harness, records, textOf, toolResults, type Harness } from './helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

const empty = { inputTokens: 0, outputTokens: 0 }

describe('ctx.subagents.spawn: a child in its own linked session, owned and disposed by its run (R-SUB-1, R-SUB-5)', () => {
  it("runs the child's first turn and resolves its answer and usage; the parent's log links the child session; the child is gone after", async () => {
    h = await harness({
      respond: (request) =>
        request.messages.length === 1 ? { toolCalls: [{ name: 'look', arguments: { at: 'x' } }], usage: { inputTokens: 10, outputTokens: 2 } } : { text: 'Found x.', usage: { inputTokens: 20, outputTokens: 3 } },
    })
    const parent = await h.agent()
    const events: string[] = []
    h.root.on('subagents/started', ({ run }) => void events.push(`started ${run.status} ${run.agent?.id === run.sessionId}`))
    h.root.on('subagents/finished', ({ run, result }) => void events.push(`finished ${result.status} ${run.agent === undefined}`))
    const run = h.root.subagents.spawn({ parent, prompt: 'Find x.', description: 'find x', agentType: 'explore', callId: 'call_9' })
    expect(run.status).toBe('queued')
    expect(h.root.subagents.list(parent)).toEqual([run])
    const result = await run.result()
    expect(result).toEqual({ runId: run.id, sessionId: run.sessionId, agentType: 'explore', status: 'completed', answer: 'Found x.', usage: { inputTokens: 30, outputTokens: 5 }, modelCalls: 2 })
    expect(events).toEqual(['started running true', 'finished completed true'])
    expect(run.sessionId).toBe(`p-sub-${run.id}`)
    expect(records(parent.session, 'subagent/')).toEqual([
      { type: 'subagent/started', runId: '#1', sessionId: 'p-sub-*', agentType: 'explore', description: 'find x', background: false, callId: 'call_9' },
      { type: 'subagent/finished', runId: '#1', status: 'completed', usage: { inputTokens: 30, outputTokens: 5 }, modelCalls: 2 },
    ])
    // The child's own transcript stays stored, its meta naming the parent; the agent itself is gone.
    const child = await h.root.sessionPersistence.load(run.sessionId)
    expect(child.events[0]!.data).toMatchObject({ parentSession: 'p' })
    expect(h.root.agents.get(run.sessionId)).toBeUndefined()
    expect(h.root.subagents.list()).toEqual([])
    // The child's request: its type's persona and the subagent section, its allowed tools only.
    const request = h.model.requests.find((r) => r.sessionId === run.sessionId)!
    expect(request.system).toContain('You explore.')
    expect(request.system).toContain(SUBAGENT_SECTION)
    expect(request.tools?.map((tool) => tool.name)).toEqual(['look'])
    await h.expectClean()
  })

  it('a hidden tool called by name is refused (the guard), and the child goes on', async () => {
    h = await harness({
      respond: (request) => (request.messages.length === 1 ? { toolCalls: [{ name: 'note', arguments: { text: 'sneaky' } }] } : 'I could not write.'),
    })
    const parent = await h.agent()
    const run = h.root.subagents.spawn({ parent, prompt: 'Write.', description: 'write', agentType: 'explore' })
    expect(await run.result()).toMatchObject({ status: 'completed', answer: 'I could not write.' })
    const child = await h.root.sessionPersistence.load(run.sessionId)
    const { toolResults: results } = { toolResults: toolResults({ events: child.events } as never) }
    expect(results).toEqual(['DENIED: Error: tool call denied: note is not a tool of this explore subagent (it may use look)'])
    await h.expectClean()
  })

  it('refuses bad spawns with typed errors, before anything starts', async () => {
    h = await harness({ respond: () => 'ok', subagents: { maxDepth: 1 } })
    const parent = await h.agent()
    const cases: [unknown, string, string][] = [
      [{ prompt: 'x', description: 'x' }, 'INVALID_SPAWN', 'spawn() needs a parent agent (from ctx.agents)'],
      [{ parent, prompt: ' ', description: 'x' }, 'INVALID_SPAWN', 'spawn() needs a non-empty prompt'],
      [{ parent, prompt: 'x', description: '' }, 'INVALID_SPAWN', 'spawn() needs a non-empty description'],
      [{ parent, prompt: 'x', description: 'x', agentType: 'nobody' }, 'UNKNOWN_AGENT_TYPE', 'there is no agent type "nobody"; the types are: explore, writer'],
    ]
    for (const [spec, code, message] of cases) {
      expect(() => h!.root.subagents.spawn(spec as never)).toThrow(expect.objectContaining({ name: 'SubagentsError', code, message }))
    }
    expect(records(parent.session, 'subagent/')).toEqual([])
    await h.disposeAgent(parent)
    expect(() => h!.root.subagents.spawn({ parent, prompt: 'x', description: 'x' })).toThrow(expect.objectContaining({ code: 'PARENT_GONE' }))
  })

  it('a config with two types of one name, or a default type that does not exist, is refused', async () => {
    const root = new Context()
    await root.plugin((await import('@deepseek-ai/dsh-agent-spine')).default, { agents: [], systemPrompt: { identity: 'x', persona: '' } })
    const type = { name: 'a', description: 'a', systemPrompt: 'a' }
    const messages: string[] = []
    for (const config of [{ types: [type, type] }, { types: [type], defaultType: 'b' }]) {
      const fiber = root.plugin(Subagents, config)
      await fiber.then(
        () => messages.push('loaded'),
        (error: unknown) => messages.push(error instanceof SubagentsError ? `${error.code}: ${error.message}` : String(error)),
      )
      expect(root.get('subagents')).toBeUndefined()
      await fiber.dispose()
    }
    expect(messages).toEqual(['INVALID_CONFIG: two agent types are named "a"', 'INVALID_CONFIG: defaultType "b" is not one of the agent types (a)'])
  })
})

describe('limits: concurrency in model order, depth (R-SUB-2)', () => {
  it('over maxConcurrent, runs wait in spawn order and start as slots free up', async () => {
    const gates = new Gates()
    h = await harness({ respond: (request, who) => gates.hold(who, request), subagents: { maxConcurrent: 2 } })
    const parent = await h.agent()
    const runs = ['one', 'two', 'three', 'four'].map((prompt) => h!.root.subagents.spawn({ parent, prompt, description: prompt }))
    await gates.reached('one')
    await gates.reached('two')
    for (let i = 0; i < 10; i++) await settle()
    expect(runs.map((run) => run.status)).toEqual(['running', 'running', 'queued', 'queued'])
    expect(gates.log).toEqual(['one', 'two'])
    gates.open('two', 'answer two')
    await gates.reached('three')
    expect(runs.map((run) => run.status)).toEqual(['running', 'completed', 'running', 'queued'])
    gates.open('one', 'answer one')
    await gates.reached('four')
    gates.open('three', 'answer three')
    gates.open('four', 'answer four')
    expect((await Promise.all(runs.map((run) => run.result()))).map((result) => result.answer)).toEqual(['answer one', 'answer two', 'answer three', 'answer four'])
    expect(gates.log).toEqual(['one', 'two', 'three', 'four'])
    await h.expectClean()
  })

  it('a child at the depth limit cannot start another: DEPTH_LIMIT, with a message that says what to do', async () => {
    const gates = new Gates()
    h = await harness({ respond: (request, who) => gates.hold(who, request), subagents: { maxDepth: 1 } })
    const parent = await h.agent()
    const run = h.root.subagents.spawn({ parent, prompt: 'Deep.', description: 'deep' })
    await gates.reached('Deep.')
    expect(h.root.subagents.depthOf(run.agent!)).toBe(1)
    expect(() => h!.root.subagents.spawn({ parent: run.agent!, prompt: 'Deeper.', description: 'deeper' })).toThrow(
      expect.objectContaining({
        code: 'DEPTH_LIMIT',
        message: 'subagents nest at most 1 level deep, and this agent is already at depth 1, so it cannot start another; do this part of the work yourself',
      }),
    )
    gates.open('Deep.', 'done')
    await run.result()
    await h.expectClean()
  })
})

describe('cancel and teardown (R-SUB-1, R-SUB-4)', () => {
  it("cancelling a running child cancels its turn with cause parent, answers its calls, and disposes it; a queued run never starts", async () => {
    const gates = new Gates()
    h = await harness({ respond: (request, who) => gates.hold(who, request), subagents: { maxConcurrent: 1 } })
    const parent = await h.agent()
    const causes: string[] = []
    h.root.on('agent/cancel-requested', (agent, cause) => void causes.push(`${agent.id === parent.id ? 'parent' : 'child'} ${cause.kind}`))
    const running = h.root.subagents.spawn({ parent, prompt: 'Run.', description: 'run' })
    const queued = h.root.subagents.spawn({ parent, prompt: 'Wait.', description: 'wait' })
    await gates.reached('Run.')
    queued.cancel()
    expect(await queued.result()).toEqual({
      runId: queued.id,
      sessionId: queued.sessionId,
      agentType: 'explore',
      status: 'cancelled',
      answer: '',
      usage: empty,
      modelCalls: 0,
      error: { code: 'CANCELLED', message: 'the subagent was cancelled before it started' },
    })
    running.cancel()
    expect(await running.result()).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED', message: 'the subagent was stopped before it finished' } })
    expect(causes).toEqual(['child parent'])
    expect(h.root.agents.get(running.sessionId)).toBeUndefined()
    const log = await h.root.sessionPersistence.load(running.sessionId)
    expect(log.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'aborted' } } })
    expect(await h.root.sessionPersistence.exists(queued.sessionId)).toBe(false)
    expect(records(parent.session, 'subagent/')).toEqual([
      { type: 'subagent/started', runId: '#1', sessionId: 'p-sub-*', agentType: 'explore', description: 'run', background: false },
      // The cancelled model call counts: it was made.
      { type: 'subagent/finished', runId: '#1', status: 'cancelled', usage: empty, modelCalls: 1, error: { code: 'CANCELLED', message: 'the subagent was stopped before it finished' } },
    ])
    expect(gates.log).toEqual(['Run.'])
    await h.expectClean()
  })

  it('a cancel that lands while the child is being created: the child never starts its turn, is disposed, and its run is closed as never started', async () => {
    const gates = new Gates()
    h = await harness({ respond: (request, who) => gates.hold(who, request) })
    const parent = await h.agent()
    let run: ReturnType<NonNullable<typeof h>['root']['subagents']['spawn']> | undefined
    let created = ''
    h.root.on('agent/created', (agent) => {
      if (agent.id === parent.id || !run) return
      created = agent.id
      run.cancel()
    })
    run = h.root.subagents.spawn({ parent, prompt: 'Run.', description: 'run' })
    expect(await run.result()).toMatchObject({ status: 'cancelled', modelCalls: 0, error: { code: 'CANCELLED', message: 'the subagent was stopped before it started' } })
    expect(created).toBe(run.sessionId)
    expect(h.root.agents.get(run.sessionId)).toBeUndefined()
    // Its session, if it was saved at creation, holds no turn (and names its parent in its meta).
    const stored = (await h.root.sessionPersistence.exists(run.sessionId)) ? (await h.root.sessionPersistence.load(run.sessionId)).events : []
    expect(stored.filter((event) => event.type === 'turn/start')).toEqual([])
    // The run is linked (its session may exist) and closed as never started, with no model call.
    expect(records(parent.session, 'subagent/')).toEqual([
      { type: 'subagent/started', runId: '#1', sessionId: 'p-sub-*', agentType: 'explore', description: 'run', background: false },
      { type: 'subagent/finished', runId: '#1', status: 'cancelled', usage: empty, modelCalls: 0, error: { code: 'CANCELLED', message: 'the subagent was stopped before it started' } },
    ])
    expect(gates.log).toEqual([])
    await h.expectClean()
  })

  it('disposing the parent cancels and disposes every child it has, running or queued, before the disposal resolves', async () => {
    const gates = new Gates()
    h = await harness({ respond: (request, who) => gates.hold(who, request), subagents: { maxConcurrent: 2 } })
    const parent = await h.agent()
    const runs = ['a', 'b', 'c'].map((prompt) => h!.root.subagents.spawn({ parent, prompt, description: prompt }))
    await gates.reached('a')
    await gates.reached('b')
    const children = runs.slice(0, 2).map((run) => run.sessionId)
    await h.disposeAgent(parent)
    expect(children.map((id) => h!.root.agents.get(id))).toEqual([undefined, undefined])
    expect((await Promise.all(runs.map((run) => run.result()))).map((result) => result.status)).toEqual(['cancelled', 'cancelled', 'cancelled'])
    expect(h.root.subagents.list()).toEqual([])
    await h.expectClean()
  })
})

describe('a background child and permissions (R-SUB-2)', () => {
  it("a background child's ask is a denial nobody is asked about, unless a rule allows the call; a foreground child asks", async () => {
    const gates = new Gates()
    h = await harness({
      permissions: {},
      respond: (request, who) => {
        if (who === 'parent') return 'ok'
        if (request.messages.length === 1) return { toolCalls: [{ name: 'note', arguments: { text: who } }] }
        return gates.hold(`${who} done`, request).then(() => 'done')
      },
    })
    const parent = await h.agent()
    const background = h.root.subagents.spawn({ parent, prompt: 'Behind.', description: 'behind', agentType: 'writer', background: true })
    const foreground = h.root.subagents.spawn({ parent, prompt: 'Here.', description: 'here', agentType: 'writer' })
    await gates.reached('Behind. done')
    await gates.reached('Here. done')
    gates.open('Behind. done', 'x')
    gates.open('Here. done', 'x')
    await Promise.all([background.result(), foreground.result()])
    const results = async (id: typeof background.sessionId) => toolResults({ events: (await h!.root.sessionPersistence.load(id)).events } as never)
    expect(await results(background.sessionId)).toEqual([
      expect.stringMatching(/^DENIED: Error: tool call denied: this subagent runs in the background, where nobody can approve a call, so only calls a permission rule allows run here \(it would have asked: /),
    ])
    expect(await results(foreground.sessionId)).toEqual(['ok: noted Here.'])
    expect(h.asked).toEqual(['child note'])
    await h.expectClean()
  })

  it('with a rule that allows the call, the background child runs it', async () => {
    h = await harness({
      permissions: { rules: [{ tool: 'note', decision: 'allow' }] },
      respond: (request, who) => (who === 'parent' ? 'ok' : request.messages.length === 1 ? { toolCalls: [{ name: 'note', arguments: { text: 'fine' } }] } : 'done'),
    })
    const parent = await h.agent()
    const run = h.root.subagents.spawn({ parent, prompt: 'Behind.', description: 'behind', agentType: 'writer', background: true })
    await run.result()
    expect(toolResults({ events: (await h.root.sessionPersistence.load(run.sessionId)).events } as never)).toEqual(['ok: noted fine'])
    expect(h.asked).toEqual([])
    await h.expectClean()
  })
})

describe('resume (R-SUB-4, R-SUB-5)', () => {
  it("a parent resumed after a crash cut its child's run off gets the run closed as interrupted in its log, once", async () => {
    const gates = new Gates()
    const before = await harness({ respond: (request, who) => gates.hold(who, request) })
    try {
      const parent = await before.agent()
      before.root.subagents.spawn({ parent, prompt: 'Long.', description: 'long' })
      await gates.reached('Long.')
      await before.root.sessions.flush(parent.session)

      // The process "dies" here: a new app over what the backend had made durable.
      h = await harness({ respond: () => 'ok', backend: before.backend.reopen() })
      const resumed = await h.resume()
      expect(records(resumed.session, 'subagent/')).toEqual([
        { type: 'subagent/started', runId: '#1', sessionId: 'p-sub-*', agentType: 'explore', description: 'long', background: false },
        { type: 'subagent/finished', runId: '#1', status: 'interrupted' },
      ])
      await h.disposeAgent(resumed)
      const again = await h.resume()
      expect(records(again.session, 'subagent/finished')).toHaveLength(1)
      await h.expectClean()
    } finally {
      await before.dispose()
    }
  })
})

describe('the mode cap and the provider seam (R-SUB-1, R-SUB-2)', () => {
  it("a child's permission mode is never above its parent's: a planning parent's child cannot write", async () => {
    h = await harness({
      permissions: {},
      // The child's history starts with the mode notice dsh-permissions injects, then the prompt.
      respond: (request, who) => (who === 'parent' ? 'ok' : textOf(request.messages.at(-1)!) === 'Write.' ? { toolCalls: [{ name: 'note', arguments: { text: 'x' } }] } : 'could not'),
    })
    const parent = await h.agent()
    h.root.permissions.setMode(parent, 'plan')
    const run = h.root.subagents.spawn({ parent, prompt: 'Write.', description: 'write', agentType: 'writer' })
    await run.result()
    expect(toolResults({ events: (await h.root.sessionPersistence.load(run.sessionId)).events } as never)).toEqual([
      expect.stringMatching(/^DENIED: Error: tool call denied: plan mode is on \(your parent agent is planning\)/),
    ])
    expect(h.asked).toEqual([])
    await h.expectClean()
  })

  it('another provider runs the children spawned while it is set; the service still queues, logs and tracks them', async () => {
    h = await harness({ respond: () => 'ok' })
    const parent = await h.agent()
    const seen: string[] = []
    const remove = h.root.subagents.setProvider({
      name: 'remote',
      async run(request, _signal, hooks) {
        seen.push(`${request.type.name} ${request.prompt} depth ${request.depth}`)
        hooks.started(undefined)
        return { status: 'completed', answer: 'from afar', usage: { inputTokens: 1, outputTokens: 1 }, modelCalls: 1 }
      },
    })
    expect(h.root.subagents.provider.name).toBe('remote')
    const run = h.root.subagents.spawn({ parent, prompt: 'Go far.', description: 'far' })
    expect(await run.result()).toMatchObject({ status: 'completed', answer: 'from afar' })
    expect(seen).toEqual(['explore Go far. depth 1'])
    expect(records(parent.session, 'subagent/').map((record) => (record as { type: string }).type)).toEqual(['subagent/started', 'subagent/finished'])
    remove()
    expect(h.root.subagents.provider.name).toBe('in-process')
    await h.expectClean()
  })
})
