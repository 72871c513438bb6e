import { afterEach, describe, expect, it } from 'vitest'
import type { TaskResult } from '../src'
import { harness, records, spec, work, type Harness } from './helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

describe('a tasks/started listener may use the handle at once (R-TSK-1)', () => {
  it("result() called from tasks/started is the task's settlement (a UI waits on it there); a stop asked there ends the task as stopped without running its work", async () => {
    h = await harness()
    const owner = await h.agent()
    const seen: (TaskResult | string)[] = []
    const stopNext = { value: false }
    h.root.on('tasks/started', ({ task }) => {
      const pending = task.result()
      if (stopNext.value) task.cancel()
      if (!(pending instanceof Promise)) seen.push(`${task.id}: result() is ${String(pending)}`)
      else void pending.then((result) => void seen.push(result))
    })
    const one = work()
    const first = h.root.tasks.start(spec(owner, one, 'first'))
    one.finish('all done')
    await first.result()
    stopNext.value = true
    const two = work()
    const second = h.root.tasks.start(spec(owner, two, 'second'))
    await second.result()
    await owner.whenIdle()
    expect(seen).toEqual([
      { id: 'task-1', status: 'completed', output: 'all done' },
      { id: 'task-2', status: 'cancelled', output: '', stoppedBy: 'person' },
    ])
    // The work was never handed a signal that had aborted already: it never ran.
    expect(two.signal).toBeUndefined()
    expect(records(owner.session, 'task/')).toEqual([
      { type: 'task/started', id: 'task-1', kind: 'test', title: 'first' },
      { type: 'task/delivered', id: 'task-1', status: 'completed', via: 'steer', messageId: 'm' },
      { type: 'task/started', id: 'task-2', kind: 'test', title: 'second' },
      { type: 'task/delivered', id: 'task-2', status: 'cancelled', via: 'inject', messageId: 'm' },
    ])
  })
})
