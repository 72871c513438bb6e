import { afterEach, describe, expect, it, vi } from 'vitest'
import { appendBuilt, appendChecked } from '@deepseek-ai/dsh-session'
import { assistant, openTurn, setup } from './helpers'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('session.lastSeq (issue 18)', () => {
  it('is the seq of the last event, events.length - 1, through appends, packed chunks and a refused append', async () => {
    const root = await setup()
    const session = root.sessions.create('a')
    const seen: Array<[number, number]> = []
    const note = () => void seen.push([session.lastSeq, session.events.length - 1])
    note()
    openTurn(session, 1)
    note()
    session.append('step/start', { turn: 1, step: 1 })
    for (const text of ['a ', 'reply ', 'in chunks']) session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text } })
    note()
    session.append('assistant/message', { turn: 1, step: 1, message: assistant('a reply in chunks'), chunkSeqs: [4, 5, 6], finishReason: { kind: 'stop' } })
    note()
    expect(() => session.append('step/end', { turn: 1, step: 9 })).toThrow()
    note()
    appendBuilt(session, 'step/end', { turn: 1, step: 1 })
    note()
    expect(seen).toEqual([
      [0, 0],
      [2, 2],
      [6, 6],
      [7, 7],
      [7, 7],
      [8, 8],
    ])
  })
})

describe('session.lastTurn (issue 18)', () => {
  it('is position.lastTurn: 0 before the first turn, the open or last closed turn after, unchanged by a refused turn/start', async () => {
    const root = await setup()
    const session = root.sessions.create('a')
    const seen: Array<[number, number]> = []
    const note = () => void seen.push([session.lastTurn, session.position.lastTurn])
    note()
    openTurn(session, 1)
    note()
    session.append('step/start', { turn: 1, step: 1 })
    appendBuilt(session, 'step/end', { turn: 1, step: 1 })
    appendBuilt(session, 'turn/end', { turn: 1, reason: { kind: 'completed' } })
    note()
    expect(() => session.append('turn/start', { turn: 5, trigger: { kind: 'prompt' } })).toThrow()
    note()
    appendBuilt(session, 'turn/start', { turn: 2, trigger: { kind: 'injection' } })
    note()
    expect(seen).toEqual([
      [0, 0],
      [1, 1],
      [1, 1],
      [1, 1],
      [2, 2],
    ])
  })
})

describe("an event's time (issue 18)", () => {
  it("is the clock's reading when the event was logged, whichever way it came in, also when the clock stands still or goes back", async () => {
    const root = await setup()
    const clock = vi.spyOn(Date, 'now')
    clock.mockReturnValue(1_800_000_000_000)
    const session = root.sessions.create('a')
    appendBuilt(session, 'turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    appendBuilt(session, 'step/start', { turn: 1, step: 1 })
    clock.mockReturnValue(1_800_000_000_007)
    appendChecked(session, 'request/header', { provider: 'p', model: 'm', system: '', tools: [], reason: 'initial' })
    appendBuilt(session, 'step/end', { turn: 1, step: 1 })
    clock.mockReturnValue(1_799_999_999_999)
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    appendBuilt(session, 'turn/start', { turn: 2, trigger: { kind: 'prompt' } })
    clock.mockReturnValue(1_800_000_000_007)
    appendBuilt(session, 'turn/end', { turn: 2, reason: { kind: 'completed' } })
    expect(session.events.map((event) => [event.type, event.time])).toEqual([
      ['session/meta', 1_800_000_000_000],
      ['turn/start', 1_800_000_000_000],
      ['step/start', 1_800_000_000_000],
      ['request/header', 1_800_000_000_007],
      ['step/end', 1_800_000_000_007],
      ['turn/end', 1_799_999_999_999],
      ['turn/start', 1_799_999_999_999],
      ['turn/end', 1_800_000_000_007],
    ])
    expect(JSON.parse(JSON.stringify(session.events)).map((event: { time: number }) => event.time)).toEqual(session.events.map((event) => event.time))
  })
})
