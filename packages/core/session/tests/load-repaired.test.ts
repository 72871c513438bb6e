import { describe, expect, it } from 'vitest'
import { loadRepaired, MemorySessionPersistence, repairSession, SessionId, type AnySessionEvent } from '@deepseek-ai/dsh-session'
import { answer, closedTurn, openTurn, setup, toolCall } from './helpers'

const now = 1_700_000_000_000

/** A stored log (as plain JSON records) whose last turn a crash left open in a step with one unanswered call. */
async function crashedLog(): Promise<AnySessionEvent[]> {
  const root = await setup()
  const log = root.sessions.prepare('s')
  closedTurn(log, 1)
  openTurn(log, 2)
  log.append('step/start', { turn: 2, step: 1 })
  answer(log, 2, 1, [toolCall('c1')])
  return JSON.parse(JSON.stringify(log.events))
}

describe('loadRepaired (R-PER-3 for any backend): a backend supplies only its reads and its appends', () => {
  it('reads, appends the planned repairs durably and returns the repaired log with the repairs and the read warnings', async () => {
    const stored = await crashedLog()
    const appended: AnySessionEvent[][] = []
    const warning = { code: 'TORN_TAIL', message: 'cut a torn tail' }
    const loaded = await loadRepaired(
      'crashed',
      {
        read: async (log) => {
          for (const event of stored) log.push(JSON.parse(JSON.stringify(event)))
          return [warning]
        },
        appendRepairs: async (events) => void appended.push([...events]),
      },
      { now },
    )
    const plan = repairSession(stored, { now })
    expect(appended).toEqual([plan.events])
    expect(loaded).toEqual({ id: SessionId('crashed'), events: [...stored, ...plan.events], repairs: plan.repairs, warnings: [warning] })
    // The result is what a session resumes from: it replays as a valid, closed log.
    const root = await setup()
    expect(root.sessions.prepare('crashed', { events: loaded.events }).position.openTurn).toBeUndefined()
  })

  it('appends nothing for a log whose turns are closed', async () => {
    const root = await setup()
    const log = root.sessions.prepare('s')
    closedTurn(log, 1)
    const stored = JSON.parse(JSON.stringify(log.events)) as AnySessionEvent[]
    let appends = 0
    const loaded = await loadRepaired('s', {
      read: async (into) => void stored.forEach((event) => into.push(event)),
      appendRepairs: async () => void appends++,
    })
    expect(appends).toBe(0)
    expect(loaded).toEqual({ id: SessionId('s'), events: stored, repairs: [], warnings: [] })
  })

  it('an abort during the read stops the load before any repair is appended, with the signal reason', async () => {
    const stored = await crashedLog()
    const controller = new AbortController()
    const reason = new Error('owner unloaded')
    let appends = 0
    const loading = loadRepaired(
      's',
      {
        read: async (log) => {
          for (const event of stored) log.push(event)
          controller.abort(reason)
        },
        appendRepairs: async () => void appends++,
      },
      { signal: controller.signal },
    )
    await expect(loading).rejects.toBe(reason)
    expect(appends).toBe(0)
  })

  it('MemorySessionPersistence.load honours its signal: an aborted load rejects and repairs nothing', async () => {
    const backend = new MemorySessionPersistence()
    const stored = await crashedLog()
    await backend.append(SessionId('s'), stored)
    await backend.flush(SessionId('s'))
    const reason = new Error('gave up')
    await expect(backend.load(SessionId('s'), { signal: AbortSignal.abort(reason) })).rejects.toBe(reason)
    const loaded = await backend.load(SessionId('s'))
    expect(loaded.events.slice(0, stored.length)).toEqual(stored)
    expect(loaded.repairs.map((repair) => repair.type)).toEqual(['tool/call', 'tool/result', 'step/end', 'turn/end'])
  })
})
