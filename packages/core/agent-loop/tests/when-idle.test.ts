import { describe, expect, it } from 'vitest'
import { deferred, settle, spine, trace } from '@deepseek-ai/dsh-testkit'

/**
 * `whenIdle()` made while the drain waits to start shares the drain's start
 * (one promise for the admission and the wait): these pin that it still
 * settles exactly when the agent is idle, whatever the drain's first call did.
 */
describe('whenIdle while the drain waits to start (R-LOOP-5)', () => {
  it('settles once the turn closed when the turn ran to its close at once, with the agent idle', async () => {
    const { agent } = await spine({ model: { record: false, respond: () => ({ text: ['ok'] }) } })
    const a = await agent()
    a.followup('one')
    await a.whenIdle()
    expect(trace(a.session).at(-1)).toBe('turn/end 1 completed')
    expect(a.status).toBe('idle')
  })

  it('waits for a turn that had to wait, and for every caller made before the start', async () => {
    const { agent, root } = await spine({ model: { script: ['a'] } })
    const a = await agent()
    const gate = deferred()
    root.on('agent/post-step', () => gate.promise)
    a.followup('one')
    const settled: string[] = []
    const first = a.whenIdle().then(() => void settled.push(`first ${a.status}`))
    const second = a.whenIdle().then(() => void settled.push(`second ${a.status}`))
    await settle()
    await settle()
    expect(settled).toEqual([])
    expect(a.status).toBe('running')
    // One made while the turn waits (the drain has started): it settles at the same idle.
    const during = a.whenIdle().then(() => void settled.push(`during ${a.status}`))
    gate.resolve()
    await Promise.all([first, second, during])
    expect(settled.sort()).toEqual(['during idle', 'first idle', 'second idle'])
    expect(trace(a.session).at(-1)).toBe('turn/end 1 completed')
  })

  it('waits for the drain a wakeup from inside the first call started', async () => {
    const { agent, root } = await spine({ model: { record: false, respond: () => ({ text: ['ok'] }) } })
    const a = await agent()
    let woken = false
    // At the first turn's end, a listener sends another follow-up: the drain ends and a new one is started.
    root.on('session/event', (_session, event) => {
      if (event.type === 'turn/end' && !woken) {
        woken = true
        a.followup('two')
      }
    })
    // The second turn waits (a macrotask): the shared promise must not settle while it runs.
    root.on('agent/post-step', (_agent, turn) => (turn === 2 ? settle() : undefined))
    a.followup('one')
    await a.whenIdle()
    expect(trace(a.session).filter((line) => line.startsWith('turn/end'))).toEqual(['turn/end 1 completed', 'turn/end 2 completed'])
    expect(a.status).toBe('idle')
  })

  it('settles when the agent is disposed before the drain started', async () => {
    const { agent, handles, model } = await spine({ model: { script: ['never'] } })
    const a = await agent()
    a.followup('one')
    const waiting = a.whenIdle()
    await handles[0]!.dispose()
    await waiting
    expect(model.calls).toBe(0)
  })
})
