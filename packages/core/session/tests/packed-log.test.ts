import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { SessionError, SessionId, type AnySessionEvent, type Session, type SessionEventMap } from '@deepseek-ai/dsh-session'
import { assistant, openTurn, setup, toolCall, toolResult } from './helpers'

type Chunk = SessionEventMap['assistant/chunk']['chunk']

/** A step of turn 1 streaming `chunks`, answered and (unless `open`) closed. */
function streamedStep(session: Session, chunks: readonly Chunk[], options: { step?: number; open?: boolean } = {}) {
  const step = options.step ?? 1
  session.append('step/start', { turn: 1, step })
  const appended = chunks.map((chunk) => session.append('assistant/chunk', { turn: 1, step, chunk }))
  session.append('assistant/message', {
    turn: 1,
    step,
    message: assistant('answer', `a${step}`),
    chunkSeqs: appended.map((event) => event.seq),
    finishReason: { kind: 'stop' },
  })
  if (!options.open) session.append('step/end', { turn: 1, step })
  return appended
}

const everyShape: Chunk[] = [
  { type: 'reasoning-delta', index: 0, text: 'Let me think… 🤔' },
  { type: 'reasoning-delta', index: 0, text: '', signature: 'c2ln\n"quoted"' },
  { type: 'text-delta', index: 1, text: 'Hello, ' },
  { type: 'text-delta', index: 1, text: '' },
  { type: 'text-delta', index: 1, text: 'wörld "\\ \u0000' },
  { type: 'tool-call-delta', index: 2, id: 'call_1' as never, name: 'read_file', argumentsDelta: '{"pa' },
  { type: 'tool-call-delta', index: 2, argumentsDelta: 'th":"a.ts"}' },
  { type: 'usage', usage: { inputTokens: 12, outputTokens: 3 } },
  { type: 'finish', reason: { kind: 'stop' } },
]

/** Deep-frozen all the way down. */
function deepFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true
  return Object.isFrozen(value) && Object.values(value).every(deepFrozen)
}

describe('published chunks are kept packed, behind the same read-only events view', () => {
  it('a packed chunk reads back equal, deep-frozen, with the same JSON (keys in the same order)', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    const appended = streamedStep(session, everyShape)
    const json = appended.map((event) => JSON.stringify(event))
    const read = appended.map((event) => session.events[event.seq]!)
    expect(read).toEqual(appended)
    expect(read.map((event) => JSON.stringify(event))).toEqual(json)
    expect(read.every(deepFrozen)).toBe(true)
    expect(JSON.stringify(session.events)).toBe(`[${session.events.map((event) => JSON.stringify(event)).join(',')}]`)
  })

  it('a packed entry is rebuilt on read (a new object, reused while read again); every other entry keeps its identity', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    const [first, second] = streamedStep(session, [everyShape[2]!, everyShape[3]!])
    const meta = session.events[0]
    expect(session.events[0]).toBe(meta)
    expect(session.events[first!.seq]).not.toBe(first)
    expect(session.events[first!.seq]).toBe(session.events[first!.seq])
    const again = session.events[first!.seq]
    void session.events[second!.seq]
    expect(session.events[first!.seq]).not.toBe(again)
    expect(session.events[first!.seq]).toEqual(first)
  })

  it('a chunk is the appended object itself while it is being published, and packed once every listener has it', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    session.append('step/start', { turn: 1, step: 1 })
    const during: boolean[] = []
    root.sessions.observe((target, event) => void during.push(target.events[event.seq] === event))
    const chunk = session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } })
    expect(during).toEqual([true])
    expect(session.events[chunk.seq]).not.toBe(chunk)
    expect(session.events[chunk.seq]).toEqual(chunk)
  })

  it('a chunk reaches every session/event listener as the log entry, even when an earlier listener closes its step meanwhile', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    session.append('step/start', { turn: 1, step: 1 })
    root.on('session/event', (target, event) => {
      if (event.type === 'assistant/chunk') {
        target.append('assistant/message', { turn: 1, step: 1, message: assistant('x'), chunkSeqs: [event.seq], finishReason: { kind: 'stop' } })
        target.append('step/end', { turn: 1, step: 1 })
      }
    })
    const seen: boolean[] = []
    root.sessions.observe((target, event) => void seen.push(target.events[event.seq] === event))
    const chunk = session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } })
    expect(seen).toEqual([true, true, true])
    expect(session.events[chunk.seq]).not.toBe(chunk)
    expect(session.events[chunk.seq]).toEqual(chunk)
  })

  it('a chunk that is not of a documented shape stays the object it was appended as', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    const odd: Chunk[] = [
      { index: 0, type: 'text-delta', text: 'keys in another order' } as Chunk,
      { type: 'text-delta', index: 0, text: 'an extra key', extra: true } as Chunk,
      { type: 'text-delta', index: 70_000, text: 'an index beyond 16 bits' },
      { type: 'tool-call-delta', index: 0, id: 'x'.repeat(40_000) as never, name: 'n', argumentsDelta: '' },
      { type: 'finish', reason: { kind: 'error', failure: { code: 'TRANSPORT', message: 'reset' } } } as Chunk,
    ]
    const appended = streamedStep(session, odd)
    expect(appended.map((event) => session.events[event.seq])).toEqual(appended)
    for (const event of appended) expect(session.events[event.seq]).toBe(event)
  })

  it('a long step reads back equal, every chunk, its pages sealed mid-step', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    // 10,000 chunks of 1 to 300 characters: the columns grow several times, and pages seal at
    // 256 Ki characters, in the middle of the step.
    const chunks: Chunk[] = Array.from({ length: 10_000 }, (_, i) => {
      const shape = everyShape[i % (everyShape.length - 1)]!
      const text = `${i}:${'x'.repeat((i * 37) % 300)}`
      if (shape.type === 'text-delta') return { type: 'text-delta', index: 1, text }
      if (shape.type === 'reasoning-delta') return shape.signature === undefined ? { type: 'reasoning-delta', index: 0, text } : { type: 'reasoning-delta', index: 0, text, signature: `s${i}` }
      return shape
    })
    const appended = streamedStep(session, chunks)
    expect(appended.map((event) => session.events[event.seq])).toEqual(appended)
    // Read again from the end backwards: no answer depends on reading in order.
    for (let i = appended.length - 1; i >= 0; i -= 997) expect(session.events[appended[i]!.seq]).toEqual(appended[i])
  })

  it('a session of many steps reads back every chunk with its own turn and step', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    // 40 steps: more runs (one per step) than the pack's run lists start with.
    const appended = Array.from({ length: 40 }, (_, i) =>
      streamedStep(session, [
        { type: 'text-delta', index: 0, text: `step ${i + 1}, ` },
        { type: 'text-delta', index: 0, text: 'done' },
      ], { step: i + 1 }),
    ).flat()
    expect(appended.map((event) => session.events[event.seq])).toEqual(appended)
    expect(appended.map((event) => [event.data.turn, event.data.step])).toEqual(Array.from({ length: 80 }, (_, i) => [1, (i >> 1) + 1]))
  })

  it('keeps each chunk time exactly, however the clock moved', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    const realNow = Date.now
    // Then: the largest offset a run keeps (65,535 ms after its base), one past it (a new run), and two
    // fractional times a whole number of ms apart whose base + offset is not the second time in doubles.
    const times = [
      1_700_000_000_000, 1_700_000_000_005, 1_699_999_999_000, 1_700_000_000_000.5, 1_800_000_000_000, 1_800_000_000_001, 1_800_000_065_535, 1_800_000_065_536,
      1_800_000_065_537, 342.9450905677768, 59432.94509056777,
    ]
    let next = 0
    Date.now = () => times[next++]!
    try {
      session.append('step/start', { turn: 1, step: 1 })
      next = 0
      for (let i = 0; i < times.length; i++) session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: `${i}` } })
    } finally {
      Date.now = realNow
    }
    session.append('assistant/message', { turn: 1, step: 1, message: assistant(times.map((_, i) => i).join('')), chunkSeqs: times.map((_, i) => 4 + i), finishReason: { kind: 'stop' } })
    session.append('step/end', { turn: 1, step: 1 })
    expect(session.events.slice(4, 4 + times.length).map((event) => event.time)).toEqual(times)
  })

  it('the view behaves as a read-only array of the events', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    streamedStep(session, everyShape.slice(0, 3))
    const plain: AnySessionEvent[] = JSON.parse(JSON.stringify(session.events))
    const events = session.events
    expect(Array.isArray(events)).toBe(true)
    expect(events.length).toBe(plain.length)
    expect([...events]).toEqual(plain)
    expect(events).toEqual(plain)
    expect(Object.keys(events)).toEqual(plain.map((_event, i) => String(i)))
    expect(events.slice(-3)).toEqual(plain.slice(-3))
    expect(events.at(-1)).toEqual(plain.at(-1))
    expect(events.map((event) => event.seq)).toEqual(plain.map((event) => event.seq))
    expect(events.filter((event) => event.type === 'assistant/chunk')).toHaveLength(3)
    expect(events.findLast((event) => event.type === 'assistant/chunk')?.seq).toBe(6)
    expect(events.indexOf(events[1]!)).toBe(1)
    expect(events.lastIndexOf(events[1]!)).toBe(1)
    expect(events.includes(events[4]!)).toBe(true)
    expect(3 in events && !(99 in events)).toBe(true)
    expect(inspect(events)).toContain("type: 'assistant/chunk'")
  })

  it('the callback methods agree with Array on packed entries: arguments, thisArg, early exits, reduce', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    streamedStep(session, everyShape)
    const events = session.events
    const plain: AnySessionEvent[] = JSON.parse(JSON.stringify(events))
    const seen: Array<[number, boolean]> = []
    events.forEach(function (this: unknown, event, seq, all) {
      seen.push([seq, this === plain && all === events && event.seq === seq])
    }, plain)
    expect(seen).toEqual(plain.map((_event, seq) => [seq, true]))
    const isChunk = (event: AnySessionEvent) => event.type === 'assistant/chunk'
    expect(events.find(isChunk)).toEqual(plain.find(isChunk))
    expect(events.findIndex(isChunk)).toBe(plain.findIndex(isChunk))
    expect(events.findLastIndex(isChunk)).toBe(plain.findLastIndex(isChunk))
    expect(events.find((event) => event.type === ('nope' as never))).toBeUndefined()
    expect(events.findIndex((event) => event.type === ('nope' as never))).toBe(-1)
    expect(events.some(isChunk)).toBe(true)
    expect(events.every(isChunk)).toBe(false)
    expect(events.every((event) => event.seq >= 0)).toBe(true)
    // Early exit: find stops at the first hit.
    let visited = 0
    events.find((event) => (visited++, isChunk(event)))
    expect(visited).toBe(plain.findIndex(isChunk) + 1)
    const sum = (total: number, event: AnySessionEvent) => total + event.seq
    expect(events.reduce(sum, 0)).toBe(plain.reduce(sum, 0))
    const later = (last: AnySessionEvent, event: AnySessionEvent) => (last.seq < event.seq ? event : last)
    expect(events.reduce(later)).toEqual(plain.at(-1))
    expect(() => events.forEach(42 as never)).toThrow(TypeError)
    // find/findLast return the very object the callback accepted, even when it read other packed entries meanwhile.
    let accepted: AnySessionEvent | undefined
    const lastChunk = events.findLast((event, seq, all) => {
      void all[seq - 1]
      return isChunk(event) && (accepted = event) !== undefined
    })
    expect(lastChunk).toBe(accepted)
    const firstChunk = events.find((event, seq, all) => {
      void all[seq + 1]
      return isChunk(event) && (accepted = event) !== undefined
    })
    expect(firstChunk).toBe(accepted)
    // On another receiver, or detached, each method is Array's.
    const other = [plain[0]!, plain[1]!]
    const visits: number[] = []
    events.forEach.call(other, (_event, seq) => visits.push(seq))
    expect(visits).toEqual([0, 1])
    expect(events.slice.call(other, 1)).toEqual([plain[1]])
    const reduce = events.reduce as (...args: unknown[]) => unknown
    expect(reduce.call([], later, 7)).toBe(7)
    expect(() => reduce.call([], later)).toThrow(TypeError)
    const { forEach } = events
    expect(() => forEach((event) => event)).toThrow(TypeError)
  })

  it('typeAt names each entry\'s type without rebuilding a packed chunk; undefined off the log', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    streamedStep(session, everyShape)
    const types = [...session.events].map((event) => event.type)
    expect(types.map((_type, seq) => session.typeAt(seq))).toEqual(types)
    expect(types).toContain('assistant/chunk')
    for (const seq of [-1, types.length, 1.5, Number.NaN]) expect(session.typeAt(seq)).toBeUndefined()
  })

  it('refuses writes with READ_ONLY: append through session.append', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    const events = session.events as AnySessionEvent[]
    const writes: Array<() => unknown> = [
      () => events.push(events[0]!),
      () => (events[1] = events[0]!),
      () => events.splice(0, 1),
      () => delete events[0],
      () => Object.defineProperty(events, 5, { value: 1 }),
      () => Object.freeze(events),
    ]
    for (const write of writes) expect(write).toThrow(expect.objectContaining({ code: 'READ_ONLY', name: 'SessionError' }))
    expect(writes.length).toBe(6)
    expect(session.events.length).toBe(1)
    expect(() => events.push(events[0]!)).toThrow(SessionError)
  })

  it('chunkSeqs may name packed chunks: a fork copies a log with packed steps, and the copy reads back equal', async () => {
    const root = await setup()
    const source = root.sessions.create(SessionId('source'))
    openTurn(source, 1)
    streamedStep(source, everyShape)
    source.append('step/start', { turn: 1, step: 2 })
    source.append('assistant/message', { turn: 1, step: 2, message: assistant([toolCall('c1')]), chunkSeqs: [], finishReason: { kind: 'tool-calls' } })
    source.append('tool/call', { turn: 1, step: 2, callId: 'c1' as never, name: 'read', arguments: '{}' })
    source.append('tool/result', { turn: 1, step: 2, message: toolResult('c1') })
    source.append('step/end', { turn: 1, step: 2 })
    source.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    const child = root.sessions.fork(source)
    expect(child.events.slice(1)).toEqual(source.events.map((event, i) => ({ ...event, seq: i + 1 })))
    const resumed = root.sessions.prepare(SessionId('again'), { events: JSON.parse(JSON.stringify(source.events)) })
    expect(resumed.events).toEqual(source.events)
  })
})
