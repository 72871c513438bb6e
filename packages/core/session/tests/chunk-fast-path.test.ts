import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SessionError, SessionId, type Session, type SessionEventMap } from '@deepseek-ai/dsh-session'
import { expectRefused, openTurn, setup } from './helpers'

type ChunkData = SessionEventMap['assistant/chunk']

/** The same value with every object made an ordinary one, undefined values and all (fast-check also makes null-prototype objects). */
const plainCopy = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(plainCopy)
    : value !== null && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plainCopy(item)]))
      : value

/** A live session with turn 1 and step 1 open. */
async function inStep(): Promise<Session> {
  const root = await setup()
  const session = root.sessions.create(SessionId('s'))
  openTurn(session, 1)
  session.append('step/start', { turn: 1, step: 1 })
  return session
}

/** The five documented chunk shapes (and the optional fields of two of them). */
const shapes: Array<[string, ChunkData['chunk']]> = [
  ['a text delta', { type: 'text-delta', index: 0, text: 'Hello' }],
  ['a reasoning delta', { type: 'reasoning-delta', index: 1, text: 'thinking' }],
  ['a signed reasoning delta', { type: 'reasoning-delta', index: 1, text: '', signature: 'sig==' }],
  ['a tool call delta', { type: 'tool-call-delta', index: 2, argumentsDelta: '{"path":' }],
  ['the first tool call delta (id and name)', { type: 'tool-call-delta', index: 2, id: 'call_1' as never, name: 'read', argumentsDelta: '' }],
  ['usage', { type: 'usage', usage: { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0 } }],
  ['finish', { type: 'finish', reason: { kind: 'stop' } }],
]

describe('assistant/chunk fast path: the five chunk shapes, checked field by field', () => {
  it.each(shapes)('appends %s as given and deep-freezes it', async (_name, chunk) => {
    const session = await inStep()
    const data = { turn: 1, step: 1, chunk }
    const event = session.append('assistant/chunk', data)
    expect(event).toEqual({ type: 'assistant/chunk', seq: 4, time: expect.any(Number), data: { turn: 1, step: 1, chunk: structuredClone(chunk) } })
    expect(event.data).toBe(data)
    expect(Object.isFrozen(event) && Object.isFrozen(data) && Object.isFrozen(chunk)).toBe(true)
    const inner = 'usage' in chunk ? chunk.usage : 'reason' in chunk ? chunk.reason : undefined
    if (inner) expect(Object.isFrozen(inner)).toBe(true)
  })
})

describe('assistant/chunk bad input: refused with the same typed errors as every other event', () => {
  class Delta {
    type = 'text-delta'
  }
  const cases: Array<[string, unknown, string, RegExp]> = [
    ['a turn of 0', { turn: 0, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } }, 'INVALID_EVENT', /^assistant\/chunk: data\.turn must be an integer ≥ 1$/],
    ['a fractional step', { turn: 1, step: 1.5, chunk: { type: 'text-delta', index: 0, text: 'x' } }, 'INVALID_EVENT', /data\.step must be an integer ≥ 1/],
    ['no chunk', { turn: 1, step: 1 }, 'INVALID_EVENT', /^assistant\/chunk: data\.chunk must be an object$/],
    ['a chunk without a type', { turn: 1, step: 1, chunk: { index: 0, text: 'x' } }, 'INVALID_EVENT', /^assistant\/chunk: data\.chunk\.type must be a non-empty string$/],
    ['a NaN index', { turn: 1, step: 1, chunk: { type: 'text-delta', index: Number.NaN, text: 'x' } }, 'INVALID_EVENT', /^assistant\/chunk data\.chunk\.index is NaN/],
    ['undefined text', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: undefined } }, 'INVALID_EVENT', /^assistant\/chunk data\.chunk\.text is undefined/],
    ['a class instance as chunk', { turn: 1, step: 1, chunk: new Delta() }, 'INVALID_EVENT', /data\.chunk is a Delta instance, not a plain object/],
    ['a function in usage', { turn: 1, step: 1, chunk: { type: 'usage', usage: { inputTokens: () => 1 } } }, 'INVALID_EVENT', /data\.chunk\.usage\.inputTokens is a function/],
    ['infinity in usage', { turn: 1, step: 1, chunk: { type: 'usage', usage: { inputTokens: Infinity } } }, 'INVALID_EVENT', /data\.chunk\.usage\.inputTokens is Infinity/],
    ['another step', { turn: 1, step: 2, chunk: { type: 'text-delta', index: 0, text: 'x' } }, 'INVARIANT', /^cannot append assistant\/chunk at seq 4: step 1 of turn 1 is open, but the event names step 2 of turn 1$/],
  ]
  it.each(cases)('%s', async (_name, data, code, message) => {
    const session = await inStep()
    const error = expectRefused(session, 'assistant/chunk', data as ChunkData, code as never, message)
    expect(error).toBeInstanceOf(SessionError)
    expect(Object.isFrozen(data)).toBe(false)
    expect(Object.isFrozen((data as { chunk?: object }).chunk ?? {})).toBe(false)
  })

  it('a valid chunk outside a step is an INVARIANT error, and the data stays unfrozen', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    const data = { turn: 1, step: 1, chunk: { type: 'text-delta' as const, index: 0, text: 'x' } }
    expectRefused(session, 'assistant/chunk', data, 'INVARIANT', /^cannot append assistant\/chunk at seq 3: assistant\/chunk must be inside a step, and no step is open$/)
    expect(Object.isFrozen(data) || Object.isFrozen(data.chunk)).toBe(false)
  })

  it('property: whatever it is given, an append either stores lossless JSON exactly or refuses with a typed error and changes nothing', async () => {
    const session = await inStep()
    const value = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double().filter((n) => !Object.is(n, -0)),
      fc.boolean(),
      fc.constant(undefined),
      fc.constant(null),
      fc.constant([]),
      fc.dictionary(fc.string({ maxLength: 3 }), fc.oneof(fc.integer(), fc.string(), fc.constant(undefined)), { maxKeys: 2 }),
    )
    const chunkKey = fc.constantFrom('type', 'index', 'text', 'argumentsDelta', 'id', 'name', 'signature', 'usage', 'reason', 'extra')
    const chunkType = fc.constantFrom('text-delta', 'reasoning-delta', 'tool-call-delta', 'usage', 'finish', '', 'other')
    const chunk = fc.tuple(chunkType, fc.array(fc.tuple(chunkKey, value), { maxLength: 5 })).map(([type, entries]) => {
      const out: Record<string, unknown> = { type }
      for (const [key, item] of entries) out[key] = key === 'type' ? type : item
      return out
    })
    const data = fc.record(
      { turn: fc.oneof(fc.constant(1), value), step: fc.oneof(fc.constant(1), value), chunk: fc.oneof(chunk, value) },
      { requiredKeys: [] },
    )
    fc.assert(
      fc.property(data, (input) => {
        const before = session.events.length
        const json = (() => {
          try {
            return JSON.stringify(input)
          } catch {
            return undefined
          }
        })()
        try {
          const event = session.append('assistant/chunk', input as ChunkData)
          // Accepted: it survives a JSON round trip unchanged (no undefined, NaN, …), and has the documented fields.
          expect(JSON.parse(json!)).toStrictEqual(plainCopy(input))
          expect(input).toMatchObject({ turn: 1, step: 1, chunk: { type: expect.stringMatching(/./) } })
          expect(Object.isFrozen(input) && Object.isFrozen(event)).toBe(true)
          expect(session.events.length).toBe(before + 1)
        } catch (error) {
          expect(error).toBeInstanceOf(SessionError)
          expect(['INVALID_EVENT', 'INVARIANT']).toContain((error as SessionError).code)
          expect(session.events.length).toBe(before)
          expect(Object.isFrozen(input)).toBe(false)
        }
      }),
      { numRuns: 2000 },
    )
  })
})
