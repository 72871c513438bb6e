import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LoadedLog, SessionError, SessionId, type AnySessionEvent, type Session, type SessionEventMap } from '@deepseek-ai/dsh-session'
import { assistant, openTurn, setup, toolCall, toolResult } from './helpers'

type Chunk = SessionEventMap['assistant/chunk']['chunk']

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    'loaded-test/note': { text: string }
  }
}

/** A closed turn with a streamed step and a tool round, as plain parsed JSON (what a backend reads back). */
async function storedLog(chunks: readonly Chunk[]): Promise<{ session: Session; parsed: AnySessionEvent[] }> {
  const root = await setup()
  const session = root.sessions.create(SessionId('stored'))
  openTurn(session, 1)
  session.append('step/start', { turn: 1, step: 1 })
  const seqs = chunks.map((chunk) => session.append('assistant/chunk', { turn: 1, step: 1, chunk }).seq)
  session.append('assistant/message', { turn: 1, step: 1, message: assistant([toolCall('c1')]), chunkSeqs: seqs, finishReason: { kind: 'tool-calls' } })
  session.append('tool/call', { turn: 1, step: 1, callId: 'c1' as never, name: 'read', arguments: '{}' })
  session.append('tool/result', { turn: 1, step: 1, message: toolResult('c1') })
  session.append('step/end', { turn: 1, step: 1 })
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
  return { session, parsed: JSON.parse(JSON.stringify(session.events)) }
}

const chunks: Chunk[] = [
  { type: 'text-delta', index: 0, text: 'plain ascii' },
  { type: 'text-delta', index: 0, text: 'é, 中文, 🤖 and "escapes"\n\t\\' },
  { type: 'text-delta', index: 0, text: '' },
  { type: 'reasoning-delta', index: 1, text: 'hmm' },
  { type: 'reasoning-delta', index: 1, text: 'signed', signature: 'sig/+=' },
  { type: 'tool-call-delta', index: 2, id: 'c1' as never, name: 'read', argumentsDelta: '{"path":"' },
  { type: 'tool-call-delta', index: 2, argumentsDelta: 'a.ts"}' },
  { type: 'usage', usage: { inputTokens: 5, outputTokens: 1 } },
  { type: 'finish', reason: { kind: 'tool-calls' } },
]

/** One JSON line per event, as a JSONL backend stores them. */
const linesOf = (events: readonly AnySessionEvent[]) => Buffer.from(events.map((event) => JSON.stringify(event)).join('\n') + '\n')

/** Loads `bytes` the way a JSON-lines backend does: chunks straight from the bytes, everything else parsed. */
function load(bytes: Buffer): { log: LoadedLog; fromBytes: number } {
  const log = new LoadedLog()
  let fromBytes = 0
  let start = 0
  for (let i = bytes.indexOf(10); i >= 0; start = i + 1, i = bytes.indexOf(10, start)) {
    if (log.length > 0 && log.pushChunkJson(bytes, start, i)) fromBytes++
    else log.push(JSON.parse(bytes.toString('utf8', start, i)))
  }
  return { log, fromBytes }
}

describe('LoadedLog: a log as a backend reads it back, held compactly', () => {
  it('events reads back exactly what was pushed, as a read-only array', async () => {
    const { parsed } = await storedLog(chunks)
    const log = new LoadedLog()
    for (const event of JSON.parse(JSON.stringify(parsed)) as unknown[]) log.push(event)
    expect(log.length).toBe(parsed.length)
    expect(log.events).toEqual(parsed)
    expect(JSON.stringify(log.events)).toBe(JSON.stringify(parsed))
    expect(() => (log.events as AnySessionEvent[]).push(parsed[0]!)).toThrow(expect.objectContaining({ code: 'READ_ONLY' }))
  })

  it('pushChunkJson packs the JSON text of each documented chunk shape (escapes and UTF-8 included) and nothing else', async () => {
    const { parsed } = await storedLog(chunks)
    const { log, fromBytes } = load(linesOf(parsed))
    // Every chunk line but usage and finish (kept as objects) is read from the bytes.
    expect(fromBytes).toBe(chunks.length - 2)
    expect(log.events).toEqual(parsed)
    expect(log.events.map((event) => JSON.stringify(event))).toEqual(parsed.map((event) => JSON.stringify(event)))
  })

  it('pushChunkJson refuses, changing nothing, any text that is not exactly JSON.stringify of a documented chunk at the next seq', () => {
    const log = new LoadedLog()
    log.push({ type: 'session/meta', seq: 0, time: 1, data: { createdAt: 1, version: 1 } })
    const good = '{"type":"assistant/chunk","seq":1,"time":17,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"hi"}}}'
    const refused = [
      good.replace('"seq":1', '"seq":2'),
      good.replace('"seq":1', '"seq":01'),
      good.replace('{"type"', '{ "type"'),
      good.replace('"time":17', '"time":1.5'),
      good.replace('"time":17', '"time":-17'),
      good.replace('"time":17', '"time":1e3'),
      good.replace('"turn":1', '"turn":0'),
      good.replace('"index":0', '"index":-1'),
      good.replace('"index":0,"text":"hi"', '"text":"hi","index":0'),
      good.replace('"text":"hi"', '"text":"hi","extra":1'),
      good.replace('"text":"hi"', '"text":"h\ti"'),
      good.replace('"text":"hi"', '"text":"h\\qi"'),
      good.replace('text-delta', 'text-deltas'),
      good + ' ',
      good.slice(0, -1),
      '{"type":"assistant/chunk","seq":1,"time":17,"data":{"turn":1,"step":1,"chunk":{"type":"usage","usage":{"inputTokens":1,"outputTokens":1}}}}',
      '{"type":"user/message","seq":1,"time":17,"data":{}}',
    ]
    for (const text of refused) {
      const bytes = Buffer.from(text)
      expect(log.pushChunkJson(bytes, 0, bytes.length), text).toBe(false)
    }
    expect(log.length).toBe(1)
    const bytes = Buffer.from(`xx${good}yy`)
    expect(log.pushChunkJson(bytes, 2, bytes.length - 2)).toBe(true)
    expect(log.events[1]).toEqual(JSON.parse(good))
  })

  it('property: pushChunkJson of JSON.stringify(event) reads back the event exactly, for any strings', () => {
    const text = fc.string({ unit: 'binary', maxLength: 12 })
    const chunk = fc.oneof(
      fc.record({ type: fc.constant('text-delta' as const), index: fc.nat(65535), text }),
      fc.record({ type: fc.constant('reasoning-delta' as const), index: fc.nat(65535), text }),
      fc.record({ type: fc.constant('reasoning-delta' as const), index: fc.nat(65535), text, signature: text }),
      fc.record({ type: fc.constant('tool-call-delta' as const), index: fc.nat(65535), argumentsDelta: text }),
      fc.record({ type: fc.constant('tool-call-delta' as const), index: fc.nat(65535), id: text, name: text, argumentsDelta: text }),
    )
    const event = fc.record({
      turn: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      step: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      time: fc.integer({ min: 0, max: 999_999_999_999_999 }),
      chunk,
    })
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 8 }), (events) => {
        const log = new LoadedLog()
        log.push({ type: 'session/meta', seq: 0, time: 0, data: { createdAt: 0, version: 1 } })
        // Plain objects, as JSON.parse builds them (fast-check may make null-prototype records).
        const expected = JSON.parse(JSON.stringify(events.map(({ turn, step, time, chunk }, i) => ({ type: 'assistant/chunk', seq: i + 1, time, data: { turn, step, chunk } }))))
        for (const item of expected) {
          const bytes = Buffer.from(JSON.stringify(item))
          expect(log.pushChunkJson(bytes, 0, bytes.length)).toBe(true)
        }
        expect(log.events.slice(1)).toStrictEqual(expected)
        expect(log.events.slice(1).map((item) => JSON.stringify(item))).toEqual(expected.map((item: object) => JSON.stringify(item)))
      }),
      { numRuns: 500 },
    )
  })

  it('refuses to push something that is not an object (INVALID_EVENT)', () => {
    const log = new LoadedLog()
    expect(() => log.push(7)).toThrow(expect.objectContaining({ code: 'INVALID_EVENT', message: 'event 0 is not an object' }))
    expect(() => log.push(null)).toThrow(SessionError)
    expect(log.length).toBe(0)
  })
})

describe('prepare({ events: loadedLog.events }): the trusted replay', () => {
  it('builds the same session as the plain events would, derived history included', async () => {
    const { session, parsed } = await storedLog(chunks)
    const root = await setup()
    const { log } = load(linesOf(parsed))
    const resumed = root.sessions.prepare(SessionId('resumed'), { events: log.events })
    expect(resumed.events).toEqual(session.events)
    expect(resumed.loadedLength).toBe(parsed.length)
    expect(resumed.deriveMessages()).toEqual(session.deriveMessages())
    expect(resumed.position).toEqual(session.position)
    expect(resumed.events.every((event) => Object.isFrozen(event) && Object.isFrozen(event.data))).toBe(true)
  })

  it('still enforces the shape checks and the structural invariants, with the load context in the message', async () => {
    const { parsed } = await storedLog(chunks)
    const root = await setup()
    const misplaced = structuredClone(parsed)
    // A chunk moved out of its step: its turn/step no longer name the open step.
    ;(misplaced[4]!.data as { step: number }).step = 2
    const bad = load(linesOf(misplaced)).log
    expect(() => root.sessions.prepare(SessionId('x'), { events: bad.events })).toThrow(
      expect.objectContaining({ code: 'INVARIANT', seq: 4, message: expect.stringMatching(/^cannot load session "x": cannot append assistant\/chunk at seq 4: step 1 of turn 1 is open/) }),
    )
    const shapeless = structuredClone(parsed)
    ;(shapeless[1]!.data as { turn: number }).turn = 0
    expect(() => root.sessions.prepare(SessionId('y'), { events: load(linesOf(shapeless)).log.events })).toThrow(
      expect.objectContaining({ code: 'INVALID_EVENT', path: 'data.turn' }),
    )
    const unknown = structuredClone(parsed)
    ;(unknown[2] as { type: string }).type = 'nobody/knows'
    expect(() => root.sessions.prepare(SessionId('z'), { events: load(linesOf(unknown)).log.events })).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_TYPE', seq: 2 }),
    )
  })

  it('a projector replayed from a loaded log sees only the log before its event, as on append', async () => {
    const root = await setup()
    const seen: Array<[number, number]> = []
    root.sessions.projector('loaded-test/note', (event, session) => {
      seen.push([event.seq, session.events.length])
      return undefined
    })
    const session = root.sessions.create(SessionId('notes'))
    session.append('loaded-test/note', { text: 'a' })
    session.append('loaded-test/note', { text: 'b' })
    const { log } = load(linesOf(JSON.parse(JSON.stringify(session.events))))
    seen.length = 0
    root.sessions.prepare(SessionId('again'), { events: log.events })
    expect(seen).toEqual([
      [1, 1],
      [2, 2],
    ])
  })

  it('the session keeps its own entry list: what is pushed later, or appended to the session, does not leak across', async () => {
    const { parsed } = await storedLog(chunks)
    const root = await setup()
    const { log } = load(linesOf(parsed))
    const first = root.sessions.prepare(SessionId('first'), { events: log.events })
    const second = root.sessions.prepare(SessionId('second'), { events: log.events })
    first.append('turn/start', { turn: 2, trigger: { kind: 'prompt' } })
    log.push({ type: 'turn/start', seq: log.length, time: 1, data: { turn: 2, trigger: { kind: 'steering' } } })
    expect(first.events.length).toBe(parsed.length + 1)
    expect(second.events.length).toBe(parsed.length)
    expect(log.length).toBe(parsed.length + 1)
    expect((first.events.at(-1)!.data as { trigger: object }).trigger).toEqual({ kind: 'prompt' })
    expect((log.events.at(-1)!.data as { trigger: object }).trigger).toEqual({ kind: 'steering' })
  })
})
