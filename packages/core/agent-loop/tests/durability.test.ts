import { describe, expect, it } from 'vitest'
import type { AgentError } from '@deepseek-ai/dsh-agent'
import { MemorySessionPersistence, SessionId, memoryPersistence, type Session } from '@deepseek-ai/dsh-session'
import { deferred, echo, spine, trace } from '@deepseek-ai/dsh-testkit'

/**
 * Durability before the request (issue 14.2, contracts §2) and the
 * refused-write rule for flushes (issue 14.1): with durability `'step'` the
 * events a request derives from are flushed before it leaves, each burst of
 * admissions is flushed, and every turn end is; a flush that rejects fails
 * the agent with `PERSISTENCE_FAILED`.
 */

const opts = { provider: 'scripted', model: 'test-model' }
const toolRound = [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], answer: 'done' }]

/** Where each flush started: the type of the log's last event then, and how many model calls had started. */
function flushStarts(root: Awaited<ReturnType<typeof spine>>['root'], model: { calls: number }, hold?: (session: Session) => Promise<void> | undefined) {
  const starts: Array<[string, number]> = []
  root.on('session/flush', (session) => {
    starts.push([String(session.events.at(-1)?.type), model.calls])
    return hold?.(session)
  })
  return starts
}

function errorReports(root: Awaited<ReturnType<typeof spine>>['root']) {
  const reports: Array<{ turn: number; step: number | undefined; code: unknown; causeCode: unknown }> = []
  root.on('agent/error', (_agent, turn, step, error) => {
    reports.push({ turn, step, code: (error as AgentError).code, causeCode: ((error as AgentError).cause as { code?: unknown } | undefined)?.code })
  })
  return reports
}

const rejectWhen = (type: string) => (session: Session) =>
  session.events.at(-1)?.type === type ? Promise.reject(new Error('disk full')) : undefined

describe("durability 'step' (the default): what a request derives from is durable before it leaves", () => {
  it('each step flushes after its batch and header and before its request; each burst of admissions and each turn end is flushed', async () => {
    const { agent, root, model } = await spine({ model: { script: toolRound }, tools: [echo] })
    const a = await agent()
    const starts = flushStarts(root, model)
    a.followup('go')
    await a.whenIdle()
    expect(starts).toEqual([
      ['inbox/enqueue', 0], // the admission
      ['request/header', 0], // step 1.1, before its request
      ['step/start', 1], // step 1.2 (no new batch, same header), before its request
      ['turn/end', 2], // the checkpoint
    ])
  })

  it('the request waits for the flush: while the flush is pending, no model call starts', async () => {
    const { agent, root, model } = await spine({ model: { script: ['ok'] } })
    const a = await agent()
    const gate = deferred()
    flushStarts(root, model, (session) => (session.events.at(-1)?.type === 'request/header' ? gate.promise : undefined))
    a.followup('go')
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    expect(trace(a.session).at(-1)).toBe('request/header initial scripted/test-model')
    expect(model.calls).toBe(0)
    gate.resolve()
    await a.whenIdle()
    expect(model.calls).toBe(1)
  })

  it('a burst of admissions shares one flush, which covers every one of them', async () => {
    const { agent, root, model } = await spine()
    const a = await agent()
    const lengths: number[] = []
    root.on('session/flush', (session) => void lengths.push(session.events.length))
    a.queue('one')
    a.queue('two')
    a.queue('three')
    await a.whenIdle()
    expect(lengths).toEqual([4])
    expect(model.calls).toBe(0)
  })

  it('queued input survives a crash once whenIdle() resolved: the loop flushed the admission itself', async () => {
    const backend = new MemorySessionPersistence()
    const first = await spine()
    await first.root.plugin(memoryPersistence, { backend })
    const a = await first.agent()
    const parked = a.queue('remember me')
    await a.whenIdle()
    // A crash: the process dies without disposing (the backend keeps what was flushed).
    const second = await spine()
    await second.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const resumed = await second.root.agents.resume({ resumeSessionId: SessionId('a'), agentOptions: opts })
    expect(resumed.agent.inbox.nextTurn.map((item) => item.id)).toEqual([parked])
    await resumed.dispose()
  })

  it('a crash once the model received the request loses nothing the request was built from', async () => {
    const backend = new MemorySessionPersistence()
    const first = await spine({ model: { script: ['never seen'] } })
    await first.root.plugin(memoryPersistence, { backend })
    const a = await first.agent()
    const call = first.model.control()
    a.followup('the prompt')
    await call.started
    // A crash right after the server received the request.
    const second = await spine()
    await second.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const resumed = await second.root.agents.resume({ resumeSessionId: SessionId('a'), agentOptions: opts })
    expect(trace(resumed.agent.session).slice(0, 6)).toEqual([
      'inbox/enqueue next-turn "the prompt"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "the prompt"',
      'request/header initial scripted/test-model',
    ])
    await resumed.dispose()
    await call.end()
  })
})

describe("durability 'turn': only turn ends are flushed", () => {
  it('no flush before requests or after admissions', async () => {
    const { agent, root, model } = await spine({ model: { script: toolRound }, tools: [echo], durability: 'turn' })
    const a = await agent()
    const starts = flushStarts(root, model)
    a.followup('go')
    await a.whenIdle()
    a.queue('parked')
    await a.whenIdle()
    expect(starts).toEqual([['turn/end', 2]])
  })
})

describe('the refused-write rule: a flush that rejects (PERSISTENCE_FAILED)', () => {
  it('at the per-step flush: the request is never sent; the step and turn close error PERSISTENCE_FAILED; agent/error once; idle; admissions refused', async () => {
    const { agent, root, model } = await spine({ model: { script: ['never'] } })
    const a = await agent()
    const reports = errorReports(root)
    flushStarts(root, model, rejectWhen('request/header'))
    a.followup('go')
    await a.whenIdle()
    expect(model.calls).toBe(0)
    expect(trace(a.session)).toEqual([
      'inbox/enqueue next-turn "go"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "go"',
      'request/header initial scripted/test-model',
      'step/end 1.1',
      'turn/end 1 error PERSISTENCE_FAILED',
    ])
    expect(reports).toEqual([{ turn: 1, step: 1, code: 'PERSISTENCE_FAILED', causeCode: 'FLUSH_FAILED' }])
    expect(a.status).toBe('idle')
    expect(() => a.followup('again')).toThrow(expect.objectContaining({ code: 'PERSISTENCE_FAILED' }))
    await expect(a.runMaintenance(async () => 'ran')).rejects.toMatchObject({ code: 'PERSISTENCE_FAILED' })
  })

  it('at the turn-end checkpoint: reported with the turn and no step; the next queued prompt does not run', async () => {
    const { agent, root, model } = await spine({ model: { script: ['one', 'two'] } })
    const a = await agent()
    const reports = errorReports(root)
    flushStarts(root, model, rejectWhen('turn/end'))
    a.followup('first')
    a.followup('second')
    await a.whenIdle()
    expect(model.calls).toBe(1)
    expect(trace(a.session).slice(-2)).toEqual(['step/end 1.1', 'turn/end 1 completed'])
    expect(reports).toEqual([{ turn: 1, step: undefined, code: 'PERSISTENCE_FAILED', causeCode: 'FLUSH_FAILED' }])
    expect(a.inbox.nextTurn.map((item) => item.content)).toEqual([[{ type: 'text', text: 'second' }]])
    expect(() => a.steer('more')).toThrow(expect.objectContaining({ code: 'PERSISTENCE_FAILED' }))
  })

  it('after an idle injection: its one-shot turn is written, the failure is reported with that turn', async () => {
    const { agent, root, model } = await spine()
    const a = await agent()
    const reports = errorReports(root)
    flushStarts(root, model, rejectWhen('turn/end'))
    a.inject('remember: tabs')
    await a.whenIdle()
    expect(trace(a.session)).toEqual(['turn/start 1 injection', 'user/message "remember: tabs"', 'turn/end 1 completed'])
    expect(reports).toEqual([{ turn: 1, step: undefined, code: 'PERSISTENCE_FAILED', causeCode: 'FLUSH_FAILED' }])
    expect(() => a.inject('more')).toThrow(expect.objectContaining({ code: 'PERSISTENCE_FAILED' }))
  })

  it('after an admission: agent/error names turn 0 when no turn ran yet; the item stays pending', async () => {
    const { agent, root, model } = await spine()
    const a = await agent()
    const reports = errorReports(root)
    flushStarts(root, model, rejectWhen('inbox/enqueue'))
    a.queue('parked')
    await a.whenIdle()
    expect(reports).toEqual([{ turn: 0, step: undefined, code: 'PERSISTENCE_FAILED', causeCode: 'FLUSH_FAILED' }])
    expect(a.inbox.nextTurn).toHaveLength(1)
    expect(() => a.followup('go')).toThrow(expect.objectContaining({ code: 'PERSISTENCE_FAILED' }))
    expect(model.calls).toBe(0)
  })

  it('dispose after a flush failure settles, and the failure is reported once', async () => {
    const { agent, root, model, handles } = await spine({ model: { script: ['one'] } })
    const a = await agent()
    const reports = errorReports(root)
    // Every flush fails from the first step on, as a writer whose failure is sticky does.
    let broken = false
    flushStarts(root, model, (session) => {
      if (session.events.at(-1)?.type === 'request/header') broken = true
      return broken ? Promise.reject(new Error('EIO')) : undefined
    })
    a.followup('go')
    a.queue('parked')
    await a.whenIdle()
    await handles[0]!.dispose()
    expect(reports.map((report) => report.code)).toEqual(['PERSISTENCE_FAILED'])
    expect(() => a.followup('late')).toThrow(expect.objectContaining({ code: 'DISPOSED' }))
  })
})
