import { MemorySessionPersistence } from '@deepseek-ai/dsh-session'
import { afterEach, describe, expect, it } from 'vitest'
import { gate, harness, holdTool, records, seen, spec, textOf, work, type Harness } from './helpers'

const open: Harness[] = []
afterEach(async () => {
  for (const h of open.splice(0).reverse()) await h.dispose()
})

async function app(options: Parameters<typeof harness>[0] = {}): Promise<Harness> {
  const h = await harness(options)
  open.push(h)
  return h
}

const interrupted =
  '[Background task task-1 was interrupted] test: job\nThe session stopped before the task finished (the process ended or the agent was closed); it is not running any more. Start it again if you still need it.'

describe('resume: every task started and never delivered is delivered once, as interrupted (R-TSK-2, R-SUB-4)', () => {
  it('an owner closed while its task ran: the resumed owner is told once, without a turn; a second resume tells nothing more; new ids continue', async () => {
    const backend = new MemorySessionPersistence()
    const h = await app({ backend })
    const owner = await h.agent()
    h.root.tasks.start(spec(owner, work()))
    await h.disposeAgent(owner)

    const resumed = await h.resume()
    await resumed.whenIdle()
    expect(h.model.calls).toBe(0)
    expect(records(resumed.session, 'task/')).toEqual([
      { type: 'task/started', id: 'task-1', kind: 'test', title: 'job' },
      { type: 'task/delivered', id: 'task-1', status: 'interrupted', via: 'inject', messageId: 'm' },
    ])
    await h.disposeAgent(resumed)

    const again = await h.resume()
    await again.whenIdle()
    expect(records(again.session, 'task/delivered')).toHaveLength(1)
    const next = h.root.tasks.start(spec(again, work()))
    expect(next.id).toBe('task-2')
    again.followup('Anything?')
    await again.whenIdle()
    expect(h.requestsOf(again)[0]!.messages.map(textOf)).toEqual([interrupted, 'Anything?'])
    expect(seen(again.session, 'task-1')).toBe(1)
    await h.expectClean()
  })

  it('a crash while a task ran (a restart loses what was not flushed): the resumed owner is told once', async () => {
    const backend = new MemorySessionPersistence()
    const before = await app({ backend })
    const owner = await before.agent()
    before.root.tasks.start(spec(owner, work()))
    await before.root.sessions.flush(owner.session)

    // The process "dies": a new app over what the backend had made durable.
    const after = await app({ backend: backend.reopen() })
    const resumed = await after.resume()
    await resumed.whenIdle()
    expect(records(resumed.session, 'task/')).toEqual([
      { type: 'task/started', id: 'task-1', kind: 'test', title: 'job' },
      { type: 'task/delivered', id: 'task-1', status: 'interrupted', via: 'inject', messageId: 'm' },
    ])
    expect(after.model.calls).toBe(0)
    await after.expectClean()
  })

  it('an outcome admitted as steering and dropped by the disposal of its owner is delivered again after the resume, once', async () => {
    const g = gate()
    const h = await app({ tools: [holdTool(g)], respond: (request) => (textOf(request.messages.at(-1)!) === 'Hold on.' ? { toolCalls: [{ name: 'hold', arguments: {} }] } : 'ok') })
    const owner = await h.agent()
    const w = work()
    h.root.tasks.start(spec(owner, w))
    owner.followup('Hold on.')
    await g.reached.promise
    w.finish('result')
    await h.root.tasks.get('task-1')!.result()
    await h.disposeAgent(owner)

    const resumed = await h.resume()
    await resumed.whenIdle()
    resumed.followup('What came?')
    await resumed.whenIdle()
    expect(seen(resumed.session, 'task-1')).toBe(1)
    const texts = h.requestsOf(resumed).at(-1)!.messages.map(textOf)
    expect(texts.filter((text) => text === '[Background task task-1 completed] test: job\nresult')).toHaveLength(1)
    expect(texts.at(-1)).toBe('What came?')
    await h.expectClean()
  })

  it('a steering outcome still pending at a crash is read once after the resume (the inbox kept it), and not delivered again', async () => {
    const g = gate()
    const backend = new MemorySessionPersistence()
    const before = await app({ backend, tools: [holdTool(g)], respond: () => ({ toolCalls: [{ name: 'hold', arguments: {} }] }) })
    const owner = await before.agent()
    const w = work()
    before.root.tasks.start(spec(owner, w))
    owner.followup('Hold on.')
    await g.reached.promise
    w.finish('result')
    await before.root.tasks.get('task-1')!.result()
    await before.root.sessions.flush(owner.session)

    const after = await app({ backend: backend.reopen(), respond: () => 'Read it.' })
    const resumed = await after.resume()
    await resumed.whenIdle()
    resumed.followup('And?')
    await resumed.whenIdle()
    expect(seen(resumed.session, 'task-1')).toBe(1)
    expect(records(resumed.session, 'task/delivered')).toEqual([{ type: 'task/delivered', id: 'task-1', status: 'completed', via: 'steer', messageId: 'm' }])
    await after.expectClean()
  })
})
