import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LoadedLog, type AnySessionEvent } from '@deepseek-ai/dsh-session'
import { LineBuffer } from '../src/line-buffer'
import { serializeEvent } from '../src/line-format'

const bytesOf = (buffer: LineBuffer) => {
  const batch = buffer.take()
  const bytes = Buffer.concat(batch.blocks)
  buffer.release(batch)
  return bytes
}

const chunkEvent = (seq: number, time: number, chunk: unknown, extra: Record<string, unknown> = {}) =>
  ({ type: 'assistant/chunk', seq, time, data: { turn: 1, step: 2, chunk }, ...extra }) as AnySessionEvent

describe('LineBuffer: queued lines as bytes', () => {
  it('writes each event as serializeEvent does, one line each, whichever way it encodes it', () => {
    const events: AnySessionEvent[] = [
      { type: 'session/meta', seq: 0, time: 1, data: { createdAt: 1, version: 1 } } as AnySessionEvent,
      chunkEvent(1, 1_796_025_170_744, { type: 'text-delta', index: 0, text: 'plain' }),
      chunkEvent(2, 0, { type: 'text-delta', index: 12, text: 'é "quoted" \\ \n\u0001 🤖 \ud800' }),
      chunkEvent(3, 2.5, { type: 'text-delta', index: 0, text: 'a fractional time' }),
      chunkEvent(4, 7, { type: 'usage', usage: { inputTokens: 1, outputTokens: 2.5 } }),
      chunkEvent(5, 7, { type: 'finish', reason: { kind: 'error', failure: { code: 'X', message: 'm', retryable: false, detail: { deep: [1] } } } }),
      chunkEvent(6, 7, { type: 'tool-call-delta', index: 0, id: 'c', name: 'n', argumentsDelta: '{}' }, { ignorable: true }),
      chunkEvent(7, 7, { type: 'text-delta', 'key "with" quotes': 1, index: -3, text: null, flag: true }),
    ]
    const buffer = new LineBuffer()
    let taken = 0
    for (const event of events) taken += buffer.addEvent(event)
    buffer.addLine('{"type":"inbox/dequeue","seq":8,"time":9,"data":{"id":"ü"}}')
    const expected = events.map((event) => serializeEvent(event) + '\n').join('') + '{"type":"inbox/dequeue","seq":8,"time":9,"data":{"id":"ü"}}\n'
    expect(buffer.lines).toBe(events.length + 1)
    expect(taken + Buffer.byteLength('{"type":"inbox/dequeue","seq":8,"time":9,"data":{"id":"ü"}}\n')).toBe(buffer.bytes)
    expect(bytesOf(buffer).toString('utf8')).toBe(expected)
    expect(buffer.lines).toBe(0)
  })

  it('property: the bytes equal serializeEvent for any chunk event, across blocks, and a LoadedLog reads them back', () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 })
    const chunk = fc.oneof(
      fc.record({ type: fc.constant('text-delta'), index: fc.nat(), text }),
      fc.record({ type: fc.constant('reasoning-delta'), index: fc.nat(), text, signature: text }, { requiredKeys: ['type', 'index', 'text'] }),
      fc.record({ type: fc.constant('tool-call-delta'), index: fc.nat(), id: text, name: text, argumentsDelta: text }, { requiredKeys: ['type', 'index', 'argumentsDelta'] }),
      fc.record({ type: fc.constant('usage'), usage: fc.dictionary(text, fc.oneof(fc.nat(), fc.double({ noNaN: true, noDefaultInfinity: true }))) }),
      fc.record({ type: fc.constant('finish'), reason: fc.record({ kind: text, failure: fc.record({ code: text, message: text }) }, { requiredKeys: ['kind'] }) }),
    )
    const time = fc.oneof(fc.integer({ min: 0, max: 1e15 - 1 }), fc.double({ min: 0, max: 2e15, noNaN: true }))
    fc.assert(
      fc.property(fc.array(fc.tuple(time, chunk), { minLength: 1, maxLength: 300 }), (items) => {
        const events = items.map(([at, body], i) => JSON.parse(JSON.stringify(chunkEvent(i + 1, at, body))) as AnySessionEvent)
        const buffer = new LineBuffer()
        for (const event of events) buffer.addEvent(event)
        const bytes = bytesOf(buffer)
        expect(bytes.toString('utf8')).toBe(events.map((event) => serializeEvent(event) + '\n').join(''))
        const log = new LoadedLog()
        log.push({ type: 'session/meta', seq: 0, time: 0, data: { createdAt: 0, version: 1 } })
        let start = 0
        for (let end = bytes.indexOf(10); end >= 0; start = end + 1, end = bytes.indexOf(10, start)) {
          if (!log.pushChunkJson(bytes, start, end)) log.push(JSON.parse(bytes.toString('utf8', start, end)))
        }
        expect(log.events.slice(1)).toEqual(events)
      }),
      { numRuns: 300 },
    )
  })

  it('throws what JSON.stringify throws and queues nothing', () => {
    const buffer = new LineBuffer()
    const cyclic: Record<string, unknown> = { type: 'text-delta' }
    cyclic.self = [cyclic]
    expect(() => buffer.addEvent(chunkEvent(1, 1, cyclic))).toThrow(TypeError)
    expect(() => buffer.addEvent(chunkEvent(1, 1, { type: 'usage', usage: { n: 1n } }))).toThrow(TypeError)
    expect(buffer.lines).toBe(0)
    expect(bytesOf(buffer).length).toBe(0)
  })
})
