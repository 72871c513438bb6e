import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LoadedLog, SessionId, type AnySessionEvent, type SessionEventMap } from '@deepseek-ai/dsh-session'
import { assistant, openTurn, setup } from './helpers'

type Chunk = SessionEventMap['assistant/chunk']['chunk']

/** Opaque provider data as Anthropic sends it (base64 with `+`, `/`, `=`), and data a JSON writer escapes. */
const redacted: Chunk[] = [
  { type: 'redacted-reasoning-delta', index: 0, data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP+=' },
  { type: 'reasoning-delta', index: 1, text: '', signature: 'c2lnbmF0dXJl' },
  { type: 'redacted-reasoning-delta', index: 2, data: 'é "quoted" \\ 中文' },
  { type: 'text-delta', index: 3, text: 'Done.' },
  { type: 'finish', reason: { kind: 'stop' } },
]

/** A closed turn whose one step streamed `chunks`, as plain parsed JSON (what a backend reads back). */
async function storedTurn(chunks: readonly Chunk[]): Promise<AnySessionEvent[]> {
  const root = await setup()
  const session = root.sessions.create(SessionId('redacted'))
  openTurn(session, 1)
  session.append('step/start', { turn: 1, step: 1 })
  const seqs = chunks.map((chunk) => session.append('assistant/chunk', { turn: 1, step: 1, chunk }).seq)
  session.append('assistant/message', {
    turn: 1,
    step: 1,
    message: assistant([
      { type: 'redacted-reasoning', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP+=' },
      { type: 'reasoning', text: '', signature: 'c2lnbmF0dXJl' },
      { type: 'redacted-reasoning', data: 'é "quoted" \\ 中文' },
      { type: 'text', text: 'Done.' },
    ]),
    chunkSeqs: seqs,
    finishReason: { kind: 'stop' },
  })
  session.append('step/end', { turn: 1, step: 1 })
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
  return JSON.parse(JSON.stringify(session.events)) as AnySessionEvent[]
}

describe('redacted-reasoning-delta is a documented chunk shape: packed, and read back byte for byte', () => {
  it('an appended redacted-reasoning chunk reads back equal, deep-frozen, with the same JSON', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    session.append('step/start', { turn: 1, step: 1 })
    const appended = redacted.map((chunk) => session.append('assistant/chunk', { turn: 1, step: 1, chunk }))
    const read = appended.map((event) => session.events[event.seq]!)
    expect(read).toEqual(appended)
    expect(read.map((event) => JSON.stringify(event))).toEqual(appended.map((event) => JSON.stringify(event)))
    expect(read.every((event) => Object.isFrozen(event) && Object.isFrozen(event.data) && Object.isFrozen((event.data as { chunk: object }).chunk))).toBe(true)
    // Packed: a read rebuilds the event (a new object), as for the other string shapes.
    expect(session.events[appended[0]!.seq]).not.toBe(appended[0])
  })

  it('a stored log with redacted reasoning loads from its JSON lines (chunks packed from the bytes) and replays to the same history', async () => {
    const parsed = await storedTurn(redacted)
    const bytes = Buffer.from(parsed.map((event) => JSON.stringify(event)).join('\n') + '\n')
    const log = new LoadedLog()
    const fromBytes: string[] = []
    let start = 0
    for (let i = bytes.indexOf(10); i >= 0; start = i + 1, i = bytes.indexOf(10, start)) {
      if (log.length > 0 && log.pushChunkJson(bytes, start, i)) fromBytes.push((parsed[log.length - 1]!.data as { chunk: Chunk }).chunk.type)
      else log.push(JSON.parse(bytes.toString('utf8', start, i)))
    }
    expect(fromBytes).toEqual(['redacted-reasoning-delta', 'reasoning-delta', 'redacted-reasoning-delta', 'text-delta'])
    expect(log.events.map((event) => JSON.stringify(event))).toEqual(parsed.map((event) => JSON.stringify(event)))
    const root = await setup()
    const resumed = root.sessions.prepare('resumed', { events: log.events })
    expect(resumed.events).toEqual(parsed)
    expect(resumed.deriveMessages().at(-1)!.content).toEqual([
      { type: 'redacted-reasoning', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP+=' },
      { type: 'reasoning', text: '', signature: 'c2lnbmF0dXJl' },
      { type: 'redacted-reasoning', data: 'é "quoted" \\ 中文' },
      { type: 'text', text: 'Done.' },
    ])
  })

  it('pushChunkJson refuses redacted-reasoning text that is not exactly the documented shape (the line is then parsed as usual)', () => {
    const good = '{"type":"assistant/chunk","seq":1,"time":17,"data":{"turn":1,"step":1,"chunk":{"type":"redacted-reasoning-delta","index":0,"data":"abc"}}}'
    const refused = [
      good.replace('"index":0,"data":"abc"', '"data":"abc","index":0'),
      good.replace('"data":"abc"', '"data":"abc","extra":1'),
      good.replace('"data":"abc"', '"text":"abc"'),
      good.replace('"data":"abc"', '"data":1'),
      good.replace('redacted-reasoning-delta', 'redacted-reasoning'),
    ]
    const log = new LoadedLog()
    log.push({ type: 'session/meta', seq: 0, time: 0, data: { createdAt: 0, version: 1 } })
    for (const text of refused) {
      const bytes = Buffer.from(text)
      expect(log.pushChunkJson(bytes, 0, bytes.length), text).toBe(false)
    }
    const bytes = Buffer.from(good)
    expect(log.pushChunkJson(bytes, 0, bytes.length)).toBe(true)
    expect(log.events[1]).toEqual(JSON.parse(good))
  })

  it('property: a redacted-reasoning chunk of any data round-trips through pushChunkJson exactly', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.nat(65535), (data, index) => {
        const log = new LoadedLog()
        log.push({ type: 'session/meta', seq: 0, time: 0, data: { createdAt: 0, version: 1 } })
        const event = { type: 'assistant/chunk', seq: 1, time: 5, data: { turn: 1, step: 1, chunk: { type: 'redacted-reasoning-delta', index, data } } }
        const text = JSON.stringify(event)
        expect(log.pushChunkJson(Buffer.from(text), 0, Buffer.byteLength(text))).toBe(true)
        expect(JSON.stringify(log.events[1])).toBe(text)
      }),
      { numRuns: 300 },
    )
  })
})
