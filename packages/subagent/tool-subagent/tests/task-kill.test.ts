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

describe('task_kill under the permission modes (R-PRM-2, R-PRM-2a)', () => {
  it('plan mode refuses to stop a background task (it ends work half way); task_list and task_output still run', async () => {
    h = await harness({
      permissions: { mode: 'plan' },
      respond: (request, who) => {
        if (who !== 'parent') return 'unreachable'
        // (Plan mode's message comes before the person's: the first step is the one without tool results.)
        return !request.messages.some((message) => message.content.some((block) => block.type === 'tool-result'))
          ? { toolCalls: [{ name: 'task_list' }, { name: 'task_output', arguments: { taskId: 'task-1' } }, { name: 'task_kill', arguments: { taskId: 'task-1' } }] }
          : 'Planned.'
      },
    })
    const parent = await h.agent()
    const finish = deferred<string>()
    let stopAsked = false
    h.root.tasks.start({
      owner: parent,
      kind: 'job',
      title: 'migration',
      run: (signal) => {
        signal.addEventListener('abort', () => (stopAsked = true), { once: true })
        return finish.promise
      },
    })
    parent.followup('What is running?')
    await parent.whenIdle()
    const seen = { results: toolResults(parent.session).map((text) => text.split('\n')[0]), stopAsked, status: h.root.tasks.get('task-1')!.status }
    // Let the work end before asserting, so that a failure does not leave the task holding the harness's disposal.
    finish.resolve('done')
    expect(seen).toEqual({
      results: [
        'ok: task-1 [running] job: migration',
        'ok: task-1 [running] job: migration',
        'DENIED: Error: tool call denied: plan mode is on: you are planning, and task_kill (it runs commands) does not run while planning. Keep exploring with tools that only read; when the plan is ready, call exit_plan_mode with it.',
      ],
      stopAsked: false,
      status: 'running',
    })
    await h.root.tasks.get('task-1')!.result()
  })
})
