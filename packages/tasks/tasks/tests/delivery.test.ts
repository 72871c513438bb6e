import { echo, settle, trace } from '@deepseek-ai/dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { gate, harness, holdTool, records, seen, spec, textOf, work, type Harness } from './helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

/** The trace of a log without the chunks and headers. */
const lines = (session: Parameters<typeof trace>[0]) => trace(session).filter((line) => !line.startsWith('assistant/chunk') && !line.startsWith('request/header'))

describe('delivering outcomes exactly once (R-TSK-2)', () => {
  it('an owner that is idle starts a steering turn and answers the outcome', async () => {
    h = await harness({ respond: () => 'The job is done.' })
    const owner = await h.agent()
    const w = work()
    h.root.tasks.start(spec(owner, w))
    await w.running
    w.finish('line 1\nline 2\n')
    await h.root.tasks.get('task-1')!.result()
    await owner.whenIdle()
    const notice = '[Background task task-1 completed] test: job\nline 1\nline 2'
    expect(lines(owner.session)).toEqual([
      'task/started',
      `inbox/enqueue next-step ${JSON.stringify(notice)}`,
      'task/delivered',
      'turn/start 1 steering',
      'step/start 1.1',
      'inbox/dequeue',
      `steering/message ${JSON.stringify(notice)}`,
      'assistant/message "The job is done." stop',
      'step/end 1.1',
      'turn/end 1 completed',
    ])
    expect(records(owner.session, 'task/')).toEqual([
      { type: 'task/started', id: 'task-1', kind: 'test', title: 'job' },
      { type: 'task/delivered', id: 'task-1', status: 'completed', via: 'steer', messageId: 'm' },
    ])
    expect(textOf(h.requestsOf(owner)[0]!.messages.at(-1)!)).toBe(notice)
    await h.expectClean()
  })

  it('an owner that is working reads the outcome at its next step boundary, in the same turn', async () => {
    const g = gate()
    h = await harness({
      tools: [holdTool(g)],
      respond: (request) => (request.messages.length === 1 ? { toolCalls: [{ name: 'hold', arguments: {} }] } : 'Seen both.'),
    })
    const owner = await h.agent()
    const w = work()
    h.root.tasks.start(spec(owner, w))
    owner.followup('Hold on.')
    await g.reached.promise
    w.finish('result')
    await h.root.tasks.get('task-1')!.result()
    g.open.resolve()
    await owner.whenIdle()
    const notice = '[Background task task-1 completed] test: job\nresult'
    expect(lines(owner.session).slice(1)).toEqual([
      'inbox/enqueue next-turn "Hold on."',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "Hold on."',
      'assistant/message "[tool-call]" tool-calls',
      'tool/call hold',
      `inbox/enqueue next-step ${JSON.stringify(notice)}`,
      'task/delivered',
      'tool/result ok "held"',
      'inbox/dequeue',
      `steering/message ${JSON.stringify(notice)}`,
      'step/end 1.1',
      'step/start 1.2',
      'assistant/message "Seen both." stop',
      'step/end 1.2',
      'turn/end 1 completed',
    ])
    expect(h.requestsOf(owner)).toHaveLength(2)
    await h.expectClean()
  })

  it('two outcomes arrive in completion order, not start order', async () => {
    const g = gate()
    h = await harness({
      tools: [holdTool(g)],
      respond: (request) => (request.messages.length === 1 ? { toolCalls: [{ name: 'hold', arguments: {} }] } : 'Seen.'),
    })
    const owner = await h.agent()
    const first = work()
    const second = work()
    h.root.tasks.start(spec(owner, first, 'first'))
    h.root.tasks.start(spec(owner, second, 'second'))
    owner.followup('Hold on.')
    await g.reached.promise
    second.finish('two')
    await h.root.tasks.get('task-2')!.result()
    first.finish('one')
    await h.root.tasks.get('task-1')!.result()
    g.open.resolve()
    await owner.whenIdle()
    expect(h.requestsOf(owner)[1]!.messages.slice(-2).map(textOf)).toEqual([
      '[Background task task-2 completed] test: second\ntwo',
      '[Background task task-1 completed] test: first\none',
    ])
    await h.expectClean()
  })

  it('a failure is delivered with its error and the output so far', async () => {
    h = await harness()
    const owner = await h.agent()
    const w = work()
    h.root.tasks.start(spec(owner, w, 'npm test', 'shell'))
    await w.running
    w.printed = 'compiling…'
    w.fail(new Error('exit 2'))
    await h.root.tasks.get('task-1')!.result()
    await owner.whenIdle()
    expect(textOf(h.requestsOf(owner)[0]!.messages.at(-1)!)).toBe('[Background task task-1 failed] shell: npm test\nError: exit 2\nOutput so far:\ncompiling…')
    await h.expectClean()
  })
})

describe('stopping tasks (R-TSK-1, R-TSK-1a)', () => {
  it('a task stopped by the person is reported to an idle owner without starting a model call', async () => {
    h = await harness()
    const owner = await h.agent()
    const w = work()
    const task = h.root.tasks.start(spec(owner, w))
    await w.running
    w.printed = 'half'
    expect(task.cancel()).toBe(true)
    await task.result()
    await owner.whenIdle()
    expect(h.model.calls).toBe(0)
    expect(owner.status).toBe('idle')
    expect(records(owner.session, 'task/delivered')).toEqual([{ type: 'task/delivered', id: 'task-1', status: 'cancelled', via: 'inject', messageId: 'm' }])
    // The next turn's request carries it.
    owner.followup('And now?')
    await owner.whenIdle()
    expect(h.requestsOf(owner)[0]!.messages.map(textOf)).toEqual(['[Background task task-1 was stopped by the person] test: job\nOutput so far:\nstopped half', 'And now?'])
    expect(seen(owner.session, 'task-1')).toBe(1)
    await h.expectClean()
  })

  it("a cancel of the owner's turn by the person leaves its tasks running; a cancel with cause parent stops them", async () => {
    let g = gate()
    h = await harness({
      tools: [holdTool(() => g), echo],
      respond: (request) => (textOf(request.messages.at(-1)!).startsWith('Hold') ? { toolCalls: [{ name: 'hold', arguments: {} }] } : 'ok'),
    })
    const owner = await h.agent()
    const w = work()
    const task = h.root.tasks.start(spec(owner, w))
    owner.followup('Hold on.')
    await g.reached.promise
    owner.cancel({ kind: 'user' })
    await owner.whenIdle()
    await settle()
    expect(task.status).toBe('running')

    g = gate()
    owner.followup('Hold on again.')
    await g.reached.promise
    owner.cancel({ kind: 'parent' })
    await owner.whenIdle()
    expect(await task.result()).toEqual({ id: 'task-1', status: 'cancelled', output: 'stopped', stoppedBy: 'owner-cancelled' })
    await owner.whenIdle()
    expect(records(owner.session, 'task/delivered')).toEqual([{ type: 'task/delivered', id: 'task-1', status: 'cancelled', via: 'inject', messageId: 'm' }])
    expect(seen(owner.session, 'task-1')).toBe(1)
    await h.expectClean()
  })

  it('a steering outcome the owner discards (its turn is cancelled before the next step) is injected again, and the model reads it once', async () => {
    const g = gate()
    h = await harness({ tools: [holdTool(g)], respond: (request) => (request.messages.length === 1 ? { toolCalls: [{ name: 'hold', arguments: {} }] } : 'ok') })
    const owner = await h.agent()
    const w = work()
    h.root.tasks.start(spec(owner, w))
    owner.followup('Hold on.')
    await g.reached.promise
    w.finish('result')
    await h.root.tasks.get('task-1')!.result()
    expect(owner.inbox.nextStep).toHaveLength(1)
    owner.cancel({ kind: 'user' })
    await owner.whenIdle()
    expect(records(owner.session, 'task/delivered')).toEqual([
      { type: 'task/delivered', id: 'task-1', status: 'completed', via: 'steer', messageId: 'm' },
      { type: 'task/delivered', id: 'task-1', status: 'completed', via: 'inject', messageId: 'm' },
    ])
    owner.followup('What came?')
    await owner.whenIdle()
    expect(seen(owner.session, 'task-1')).toBe(1)
    expect(h.requestsOf(owner).at(-1)!.messages.map(textOf).slice(-2)).toEqual(['[Background task task-1 completed] test: job\nresult', 'What came?'])
    await h.expectClean()
  })

  it('disposing the owner stops its tasks (cause owner-disposed), waits for their work, and tells nobody', async () => {
    h = await harness()
    const owner = await h.agent()
    const w = work()
    const task = h.root.tasks.start(spec(owner, w))
    await w.running
    let settledFirst = false
    void w.settled.then(() => (settledFirst = true))
    const cancelled: string[] = []
    h.root.on('tasks/cancelled', ({ task, result }) => void cancelled.push(`${task.id} ${result.stoppedBy}`))
    await h.disposeAgent(owner)
    expect(settledFirst).toBe(true)
    expect(await task.result()).toMatchObject({ status: 'cancelled', stoppedBy: 'owner-disposed' })
    expect(cancelled).toEqual(['task-1 owner-disposed'])
    expect(h.root.tasks.list()).toEqual([])
    const log = await h.root.sessionPersistence.load(owner.id)
    expect(log.events.filter((event) => event.type === 'task/delivered')).toEqual([])
    await h.expectClean()
  })

  it('a finished task stays listed (up to keepFinished per owner), oldest dropped first', async () => {
    h = await harness({ tasks: { keepFinished: 2 } })
    const owner = await h.agent()
    for (const title of ['a', 'b', 'c']) {
      const w = work()
      const task = h.root.tasks.start(spec(owner, w, title))
      w.finish(title)
      await task.result()
      await owner.whenIdle()
    }
    expect(h.root.tasks.list(owner).map((task) => `${task.id} ${task.title}`)).toEqual(['task-2 b', 'task-3 c'])
    expect(h.root.tasks.get('task-1')).toBeUndefined()
    await h.expectClean()
  })
})
