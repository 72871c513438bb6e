import { describe, expect, it } from 'vitest'
import { SessionId, type AnySessionEvent } from '@deepseek-ai/dsh-session'
import { assistant, closedTurn, openTurn, setup, typesOf } from './helpers'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    'test/marker': { label: string }
  }
}

describe('fork (R-SES-6)', () => {
  it("copies a closed-turn prefix after the child's own session/meta, re-numbered, data and time unchanged", async () => {
    const root = await setup()
    const source = root.sessions.create('parent', { cwd: '/repo' })
    closedTurn(source, 1)
    closedTurn(source, 2)
    const child = root.sessions.fork(source, undefined, 'child')
    expect(child.id).toBe('child')
    expect(child.meta).toEqual({ cwd: '/repo', parentSession: 'parent', seedLength: 13, createdAt: expect.any(Number), version: 1 })
    expect(child.events.map((event) => event.seq)).toEqual(child.events.map((_event, index) => index))
    expect(typesOf(child)).toEqual(['session/meta', ...typesOf(source)])
    source.events.forEach((event, i) => {
      const copy = child.events[i + 1]!
      expect(copy.data).toBe(event.data)
      expect(copy.time).toBe(event.time)
      expect(Object.isFrozen(copy)).toBe(true)
    })
    expect(child.deriveMessages()).toEqual(source.deriveMessages())
    expect(child.position).toEqual({ lastTurn: 2, lastStep: 0 })
    expect(child.loadedLength).toBe(0)
  })

  it("keeps the data of seeded events unchanged, chunkSeqs included (they keep the source's numbering), also when reloaded and forked again", async () => {
    const root = await setup()
    const source = root.sessions.create('parent')
    openTurn(source, 1)
    source.append('step/start', { turn: 1, step: 1 })
    const chunk = source.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'hi' } })
    const anchor = source.append('assistant/message', { turn: 1, step: 1, message: assistant('hi'), chunkSeqs: [chunk.seq], finishReason: { kind: 'stop' } })
    source.append('step/end', { turn: 1, step: 1 })
    source.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    const child = root.sessions.fork(source, undefined, 'child')
    expect(child.events[anchor.seq + 1]!.data).toBe(anchor.data)
    const reloaded = root.sessions.prepare('child-again', { events: JSON.parse(JSON.stringify(child.events)) })
    const grandchild = root.sessions.fork(reloaded, undefined, 'grandchild')
    expect(grandchild.events[anchor.seq + 2]!.data).toEqual(anchor.data)
    closedTurn(grandchild, 2)
    grandchild.append('turn/start', { turn: 3, trigger: { kind: 'prompt' } })
    grandchild.append('step/start', { turn: 3, step: 1 })
    const late = grandchild.append('assistant/chunk', { turn: 3, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } })
    expect(() => grandchild.append('assistant/message', { turn: 3, step: 1, message: assistant('x'), chunkSeqs: [chunk.seq], finishReason: { kind: 'stop' } })).toThrow(
      expect.objectContaining({ code: 'INVARIANT' }),
    )
    grandchild.append('assistant/message', { turn: 3, step: 1, message: assistant('x'), chunkSeqs: [late.seq], finishReason: { kind: 'stop' } })
  })

  it('is private until entered, and continues turn numbering from the copy', async () => {
    const root = await setup()
    const source = root.sessions.create('parent')
    closedTurn(source, 1)
    const child = root.sessions.fork(source)
    expect(child.id).toMatch(/^parent-fork-[0-9a-f-]{36}$/)
    expect(root.sessions.get(child.id)).toBeUndefined()
    root.sessions.enter(child)
    expect(root.sessions.get(child.id)).toBe(child)
    expect(() => child.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })).toThrow(expect.objectContaining({ code: 'INVARIANT' }))
    closedTurn(child, 2)
    expect(source.events).toHaveLength(7)
  })

  it('forks at an earlier turn boundary', async () => {
    const root = await setup()
    const source = root.sessions.create('parent')
    closedTurn(source, 1) // seqs 1..6
    closedTurn(source, 2)
    const child = root.sessions.fork(source, 7, 'child')
    expect(child.meta.seedLength).toBe(7)
    expect(typesOf(child)).toEqual(['session/meta', ...typesOf(source).slice(0, 7)])
    expect(child.position.lastTurn).toBe(1)
    const empty = root.sessions.fork(source, 0, 'empty')
    expect(typesOf(empty)).toEqual(['session/meta'])
    expect(empty.meta.seedLength).toBe(0)
  })

  it('refuses to fork inside an open turn (OPEN_TURN), naming where the turn starts and ends', async () => {
    const root = await setup()
    const source = root.sessions.create('parent')
    closedTurn(source, 1)
    closedTurn(source, 2) // seqs 7..12
    expect(() => root.sessions.fork(source, 9, 'child')).toThrow(
      expect.objectContaining({
        code: 'OPEN_TURN',
        message: 'cannot fork session "parent" at 9: turn 2 is open there (it starts at seq 7); fork at 7 or earlier, or at 13 or later (after its turn/end)',
      }),
    )
    openTurn(source, 3) // seqs 13..14
    expect(() => root.sessions.fork(source)).toThrow(
      expect.objectContaining({ code: 'OPEN_TURN', message: expect.stringMatching(/turn 3 is open there \(it starts at seq 13\); fork at 13 or earlier, or wait until the turn has ended/) }),
    )
    expect(root.sessions.fork(source, 13, 'ok').position.lastTurn).toBe(2)
  })

  it('refuses a boundary that is not an integer within the log (INVALID_BOUNDARY)', async () => {
    const root = await setup()
    const source = root.sessions.create('parent')
    closedTurn(source, 1)
    for (const boundary of [-1, 1.5, 8, Number.NaN]) {
      expect(() => root.sessions.fork(source, boundary)).toThrow(expect.objectContaining({ code: 'INVALID_BOUNDARY' }))
    }
  })

  it('prepare refuses a seed that ends inside a turn (OPEN_TURN)', async () => {
    const root = await setup()
    const source = root.sessions.create('parent')
    openTurn(source, 1)
    expect(() => root.sessions.prepare('child', { seed: source.events })).toThrow(
      expect.objectContaining({ code: 'OPEN_TURN', message: 'cannot seed session "child": the seed ends inside turn 1; a seed must be a closed-turn prefix' }),
    )
  })
})

describe('prepare({ events }): a loaded log', () => {
  it('replays the log as loaded: same events, position and history; loadedLength is its length', async () => {
    const root = await setup()
    const live = root.sessions.create('s')
    closedTurn(live, 1)
    openTurn(live, 2)
    const parsed = JSON.parse(JSON.stringify(live.events)) as AnySessionEvent[]
    const loaded = root.sessions.prepare(SessionId('s2'), { events: parsed })
    expect(loaded.events).toEqual(live.events)
    expect(loaded.loadedLength).toBe(live.events.length)
    expect(loaded.position).toEqual(live.position)
    expect(loaded.deriveMessages()).toEqual(live.deriveMessages())
    expect(loaded.meta).toEqual(live.meta)
    expect(loaded.events.every((event) => Object.isFrozen(event) && Object.isFrozen(event.data))).toBe(true)
    loaded.append('step/start', { turn: 2, step: 1 })
    expect(loaded.loadedLength).toBe(live.events.length)
  })

  it('names the session and the seq of a bad loaded event', async () => {
    const root = await setup()
    const live = root.sessions.create('s')
    closedTurn(live, 1)
    const parsed = JSON.parse(JSON.stringify(live.events)) as AnySessionEvent[]
    ;(parsed[4]!.data as { step: number }).step = 2
    expect(() => root.sessions.prepare('s2', { events: parsed })).toThrow(
      expect.objectContaining({
        code: 'INVARIANT',
        seq: 4,
        type: 'assistant/message',
        message: 'cannot load session "s2": cannot append assistant/message at seq 4: step 1 of turn 1 is open, but the event names step 2 of turn 1',
      }),
    )
    const untimed = JSON.parse(JSON.stringify(live.events)) as Array<Record<string, unknown>>
    delete untimed[2]!.time
    expect(() => root.sessions.prepare('s3', { events: untimed as never })).toThrow(expect.objectContaining({ code: 'INVALID_EVENT', seq: 2 }))
    expect(() => root.sessions.prepare('s4', { events: [] })).toThrow(expect.objectContaining({ code: 'INVALID_EVENT', message: expect.stringMatching(/the log is empty/) }))
  })

  it('refuses an unknown event type unless the writer marked it ignorable (R-PER-4)', async () => {
    const root = await setup()
    const writer = root.sessions.create('s')
    const undo = root.sessions.registerType('test/marker', { ignorable: true })
    const marked = writer.append('test/marker', { label: 'safe to skip' })
    expect(marked).toEqual({ type: 'test/marker', seq: 1, time: expect.any(Number), data: { label: 'safe to skip' }, ignorable: true })
    undo()
    const parsed = JSON.parse(JSON.stringify(writer.events)) as AnySessionEvent[]
    const loaded = root.sessions.prepare('s2', { events: parsed })
    expect(loaded.events[1]).toEqual(marked)
    expect(loaded.deriveMessages()).toEqual([])

    const unmarked = parsed.map((event) => ({ ...event }))
    delete (unmarked[1] as { ignorable?: true }).ignorable
    expect(() => root.sessions.prepare('s3', { events: unmarked })).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_TYPE', seq: 1, message: expect.stringMatching(/cannot load session "s3": test\/marker is not a known event type/) }),
    )
    root.sessions.registerType('test/marker')
    expect(root.sessions.prepare('s4', { events: unmarked }).events[1]).not.toHaveProperty('ignorable')
  })

  it('takes ownership of the loaded envelopes: they become the frozen log entries, with no second copy', async () => {
    const root = await setup()
    const live = root.sessions.create('s')
    closedTurn(live, 1)
    const parsed = JSON.parse(JSON.stringify(live.events)) as AnySessionEvent[]
    const loaded = root.sessions.prepare('s2', { events: parsed })
    expect(loaded.events).toEqual(parsed)
    loaded.events.forEach((event, i) => {
      expect(event).toBe(parsed[i])
      expect(Object.isFrozen(event)).toBe(true)
    })
    // A frozen log (another session's) can be replayed too.
    expect(root.sessions.prepare('s3', { events: live.events }).events[1]).toBe(live.events[1])
  })

  it('refuses a loaded envelope with a field it does not know', async () => {
    const root = await setup()
    const live = root.sessions.create('s')
    closedTurn(live, 1)
    const parsed = JSON.parse(JSON.stringify(live.events)) as Array<Record<string, unknown>>
    parsed[3]!.checksum = 'abc'
    expect(() => root.sessions.prepare('s2', { events: parsed as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_EVENT', seq: 3, message: 'cannot load session "s2": event 3 (step/start) has a field this version does not know: "checksum"' }),
    )
  })
})
