import { settle } from '@deepseek-ai/dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { TasksError, type TaskHandle, type TaskSpec } from '../src'
import { harness, records, spec, work, type Harness } from './helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

describe('ctx.tasks: handles, lists and events (R-TSK-1)', () => {
  it('a task runs in the background: its handle, list and get follow it; tasks/* events say what happened, in order', async () => {
    h = await harness()
    const owner = await h.agent()
    const events: string[] = []
    for (const name of ['tasks/started', 'tasks/progress', 'tasks/finished', 'tasks/failed', 'tasks/cancelled'] as const) {
      h.root.on(name, (event: { task: { id: string; status: string }; note?: string; result?: { status: string; stoppedBy?: string } }) => {
        events.push(`${name} ${event.task.id}${event.note ? ` ${event.note}` : ''}${event.result ? ` ${event.result.status}${event.result.stoppedBy ? ` ${event.result.stoppedBy}` : ''}` : ''}`)
      })
    }
    const one = work()
    const two = work()
    const three = work()
    const first = h.root.tasks.start(spec(owner, one, 'first'))
    const second = h.root.tasks.start(spec(owner, two, 'second'))
    const third = h.root.tasks.start(spec(owner, three, 'third'))
    expect([first.id, second.id, third.id]).toEqual(['task-1', 'task-2', 'task-3'])
    expect(h.root.tasks.list(owner).map((task) => `${task.id} ${task.status} ${task.title}`)).toEqual(['task-1 running first', 'task-2 running second', 'task-3 running third'])
    expect(h.root.tasks.get('task-2')).toBe(second)

    ;(await one.running).progress('half way')
    one.printed = 'partial'
    expect(first.output()).toBe('partial')
    one.finish('all done')
    two.fail(Object.assign(new Error('the disk is full'), { code: 'ENOSPC' }))
    expect(third.cancel()).toBe(true)
    expect(third.cancel()).toBe(false)
    expect(third.stopRequested).toBe('person')

    expect(await first.result()).toEqual({ id: 'task-1', status: 'completed', output: 'all done' })
    expect(await second.result()).toEqual({ id: 'task-2', status: 'failed', output: '', error: { code: 'ENOSPC', message: 'the disk is full' } })
    expect(await third.result()).toEqual({ id: 'task-3', status: 'cancelled', output: 'stopped', stoppedBy: 'person' })
    expect(events).toEqual([
      'tasks/started task-1',
      'tasks/started task-2',
      'tasks/started task-3',
      'tasks/progress task-1 half way',
      'tasks/finished task-1 completed',
      'tasks/failed task-2 failed',
      'tasks/cancelled task-3 cancelled person',
    ])
    expect(first.output()).toBe('all done')
    expect(h.root.tasks.list(owner).map((task) => task.status)).toEqual(['completed', 'failed', 'cancelled'])
    await owner.whenIdle()
    expect(records(owner.session, 'task/started')).toEqual([
      { type: 'task/started', id: 'task-1', kind: 'test', title: 'first' },
      { type: 'task/started', id: 'task-2', kind: 'test', title: 'second' },
      { type: 'task/started', id: 'task-3', kind: 'test', title: 'third' },
    ])
    await h.expectClean()
  })

  it('a malformed spec is refused with INVALID_TASK and starts nothing; an owner that is gone is OWNER_GONE', async () => {
    h = await harness()
    const owner = await h.agent()
    const good = spec(owner, work())
    const bad: [Partial<TaskSpec>, string][] = [
      [{ ...good, owner: undefined }, 'ctx.tasks.start() needs an owner (an agent from ctx.agents)'],
      [{ ...good, kind: ' ' }, 'ctx.tasks.start() needs a non-empty kind'],
      [{ ...good, title: '' }, 'ctx.tasks.start() needs a non-empty title'],
      [{ ...good, run: undefined }, 'ctx.tasks.start() needs a run(signal) function'],
    ]
    for (const [input, message] of bad) {
      expect(() => h!.root.tasks.start(input as TaskSpec)).toThrow(expect.objectContaining({ name: 'TasksError', code: 'INVALID_TASK', message }))
    }
    expect(h.root.tasks.list()).toEqual([])
    expect(records(owner.session, 'task/')).toEqual([])

    await h.disposeAgent(owner)
    const error = (() => {
      try {
        h!.root.tasks.start(good)
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(TasksError)
    expect(error).toMatchObject({ code: 'OWNER_GONE', message: 'agent a is not a live agent of this app: a task needs a live owner to report to' })
  })

  it('a work that resolves with something other than text fails the task with a message saying so; a progress listener that throws changes nothing', async () => {
    h = await harness()
    const owner = await h.agent()
    h.root.on('tasks/progress', () => {
      throw new Error('a broken UI')
    })
    const task = h.root.tasks.start({
      owner,
      kind: 'test',
      title: 'odd',
      run: async (_signal, control) => {
        control.progress('starting')
        return 42 as unknown as string
      },
    })
    expect(await task.result()).toEqual({ id: 'task-1', status: 'failed', output: '', error: { code: 'TASK_FAILED', message: "the task's work resolved with number, not the text of its output" } })
    await owner.whenIdle()
    await h.expectClean()
  })

  it('the context that started a task unloading stops it (cause unloaded) and waits for its work; the owner is told without a turn', async () => {
    h = await harness()
    const root = h.root
    const owner = await h.agent()
    const w = work()
    let handle!: TaskHandle
    const producer = root.plugin({
      name: 'producer',
      inject: ['tasks'],
      apply: (ctx: typeof root) => {
        handle = ctx.tasks.start(spec(owner, w, 'from a plugin'))
      },
    })
    await producer
    await w.running
    let settled = false
    void w.settled.then(() => (settled = true))
    const unloading = producer.dispose()
    await settle()
    await unloading
    expect(settled).toBe(true)
    expect(await handle.result()).toEqual({ id: 'task-1', status: 'cancelled', output: 'stopped', stoppedBy: 'unloaded' })
    await owner.whenIdle()
    expect(h.model.calls).toBe(0)
    expect(records(owner.session, 'task/delivered')).toEqual([{ type: 'task/delivered', id: 'task-1', status: 'cancelled', via: 'inject', messageId: 'm' }])
    await h.expectClean()
  })
})
