import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { deferred } from '@deepseek-ai/dsh-testkit'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { harness, records, toolResults, type Harness } from './helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

/** How a log's turns ended, in order. */
function turnEnds(events: readonly AnySessionEvent[]): string[] {
  return events.filter((event) => event.type === 'turn/end').map((event) => (event as Extract<AnySessionEvent, { type: 'turn/end' }>).data.reason.kind)
}

describe('task_kill of a task that takes a while to stop (R-TSK-1a, R-TSK-2, R-CAN-1)', () => {
  it("a cancel of the owner's turn ends task_kill's wait at once; the task's outcome then arrives once, without a turn", async () => {
    h = await harness({
      respond: (request, who) => {
        if (who !== 'parent') return 'unreachable'
        return request.messages.length === 1 ? { toolCalls: [{ name: 'task_kill', arguments: { taskId: 'task-1' } }] } : 'Done.'
      },
    })
    const parent = await h.agent()
    // A work that is slow to stop (a process with a long shutdown): it settles only when the test says so.
    const stopped = deferred<string>()
    const asked = deferred<void>()
    h.root.tasks.start({
      owner: parent,
      kind: 'job',
      title: 'slow stop',
      run: (signal) => {
        signal.addEventListener('abort', () => asked.resolve(), { once: true })
        return stopped.promise
      },
    })
    parent.followup('Stop it.')
    await asked.promise
    parent.cancel({ kind: 'user' })
    // The turn ends while the task is still stopping (a person's cancel is not held by it).
    await vi.waitFor(() => expect(turnEnds(parent.session.events as AnySessionEvent[])).toEqual(['aborted']), { timeout: 20_000, interval: 10 })
    expect(h.root.tasks.get('task-1')!.status).toBe('running')
    expect(toolResults(parent.session)).toEqual([
      'ok: task-1 was asked to stop and has not ended yet; its outcome will come to you as a message when it does.',
    ])

    stopped.resolve('partial output')
    await h.root.tasks.get('task-1')!.result()
    await parent.whenIdle()
    expect(records(parent.session, 'task/')).toEqual([
      { type: 'task/started', id: 'task-1', kind: 'job', title: 'slow stop' },
      { type: 'task/delivered', id: 'task-1', status: 'cancelled', via: 'inject', messageId: 'm' },
    ])
    // Told once, by an injection: no turn was started for it.
    expect(turnEnds(parent.session.events as AnySessionEvent[])).toEqual(['aborted', 'completed'])
    const injected = (parent.session.events as AnySessionEvent[]).filter((event) => event.type === 'user/message' && event.data.metadata?.task === 'task-1')
    expect(injected.map((event) => (event as Extract<AnySessionEvent, { type: 'user/message' }>).data.message.content)).toEqual([
      [{ type: 'text', text: '[Background task task-1 was stopped by you] job: slow stop\nOutput so far:\npartial output' }],
    ])
    expect(h.requestsOf(parent).length).toBe(1)
    await h.expectClean()
  })
})
