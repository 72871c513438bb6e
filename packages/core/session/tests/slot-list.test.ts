import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { SlotList } from '../src/log/slot-list'

type Entry = AnySessionEvent | number

const event = (seq: number, type = 'turn/start'): AnySessionEvent => ({ type, seq, time: 0, data: {} }) as unknown as AnySessionEvent

/** One write, as the session and `LoadedLog` make them (every value is resolved against the entries so far). */
type Op =
  | { kind: 'put'; chunk: boolean }
  | { kind: 'pushPacked'; jump: number }
  | { kind: 'packAt'; pick: number; jump: number }
  | { kind: 'replace'; pick: number }
  | { kind: 'slice'; pick: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), chunk: fc.boolean() }),
  fc.record({ kind: fc.constant('pushPacked' as const), jump: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant('packAt' as const), pick: fc.nat(), jump: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant('replace' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('slice' as const), pick: fc.nat() }),
)

/** Checks `list` against `model` entry by entry, in order and backwards (the run cache must not matter). */
function same(list: SlotList, model: readonly Entry[]): void {
  expect(list.count).toBe(model.length)
  const forward = model.map((_entry, seq) => list.get(seq))
  expect(forward).toEqual(model)
  for (let seq = model.length - 1; seq >= 0; seq--) expect(list.get(seq)).toBe(model[seq])
  for (let seq = 0; seq < model.length; seq++) {
    const entry = model[seq]!
    expect(list.isChunk(seq)).toBe(typeof entry === 'number' || entry.type === 'assistant/chunk')
  }
  expect(list.get(model.length)).toBeUndefined()
  expect(list.isChunk(model.length)).toBe(false)
}

describe('SlotList: a log\'s entries with packed chunks kept as runs', () => {
  it('property: any sequence of appends, packings, replacements and copies reads back as the same entries', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
        let list = new SlotList()
        let model: Entry[] = []
        let nextIndex = 0
        for (const step of ops) {
          const objects = model.flatMap((entry, seq) => (typeof entry === 'number' ? [] : [seq]))
          switch (step.kind) {
            case 'put': {
              const entry = event(model.length, step.chunk ? 'assistant/chunk' : 'turn/start')
              list.put(model.length, entry)
              model.push(entry)
              break
            }
            case 'pushPacked':
              nextIndex += step.jump
              list.pushPacked(nextIndex)
              model.push(nextIndex++)
              break
            case 'packAt': {
              if (objects.length === 0) break
              // Mostly one of the last entries (a chunk packed after its publication), sometimes any.
              const seq = step.pick % 3 === 0 ? objects[step.pick % objects.length]! : objects[objects.length - 1 - (step.pick % Math.min(3, objects.length))]!
              nextIndex += step.jump
              list.packAt(seq, nextIndex)
              model[seq] = nextIndex++
              break
            }
            case 'replace': {
              if (objects.length === 0) break
              const seq = objects[step.pick % objects.length]!
              const entry = event(seq, 'user/message')
              list.put(seq, entry)
              model[seq] = entry
              break
            }
            case 'slice': {
              const count = step.pick % (model.length + 1)
              list = list.slice(count)
              model = model.slice(0, count)
              break
            }
          }
        }
        same(list, model)
      }),
      { numRuns: 300 },
    )
  })

  it('property: runs packed in the middle of a log with many runs (the run columns full, then grown) read back the same entries', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 70 }), fc.array(fc.nat(), { minLength: 1, maxLength: 40 }), (runs, picks) => {
        // A replayed log: object entries each followed by a packed one, so every packed entry is a run of its own.
        const list = new SlotList()
        const model: Entry[] = []
        let nextIndex = 0
        for (let r = 0; r < runs; r++) {
          const entry = event(model.length, 'assistant/chunk')
          list.put(model.length, entry)
          model.push(entry)
          nextIndex += 2
          list.pushPacked(nextIndex)
          model.push(nextIndex)
        }
        // Then object entries anywhere are packed at indices that continue no run: each packing inserts a run.
        for (const pick of picks) {
          const objects = model.flatMap((entry, seq) => (typeof entry === 'number' ? [] : [seq]))
          if (objects.length === 0) break
          const seq = objects[pick % objects.length]!
          nextIndex += 2
          list.packAt(seq, nextIndex)
          model[seq] = nextIndex
        }
        same(list, model)
      }),
      { numRuns: 150 },
    )
  })

  it('a long stream of consecutive packed chunks is one run: every seq reads back its index', () => {
    const list = new SlotList()
    list.put(0, event(0, 'session/meta'))
    for (let seq = 1; seq <= 100_000; seq++) {
      list.put(seq, event(seq, 'assistant/chunk'))
      list.packAt(seq, seq - 1)
    }
    list.put(100_001, event(100_001, 'assistant/message'))
    expect(list.count).toBe(100_002)
    expect([list.get(0), list.get(1), list.get(50_000), list.get(100_000)]).toEqual([event(0, 'session/meta'), 0, 49_999, 99_999])
    expect((list.get(100_001) as AnySessionEvent).type).toBe('assistant/message')
    // The empty run at seq 0, and the stream's one run.
    expect(list['runCount']).toBe(2)
  })

  it('refuses to replace a packed entry or to write past the end (internal errors, nothing changed)', () => {
    const list = new SlotList()
    list.put(0, event(0))
    list.pushPacked(0)
    expect(() => list.put(1, event(1))).toThrow(expect.objectContaining({ code: 'INVARIANT', seq: 1, message: expect.stringMatching(/packed chunk/) }))
    expect(() => list.packAt(1, 5)).toThrow(expect.objectContaining({ code: 'INVARIANT', seq: 1 }))
    expect(() => list.put(3, event(3))).toThrow(expect.objectContaining({ code: 'INVARIANT', seq: 3, message: expect.stringMatching(/no entry/) }))
    expect([list.count, list.get(0), list.get(1)]).toEqual([2, event(0), 0])
  })

  it('isChunk is false for anything but an entry\'s seq', () => {
    const list = new SlotList()
    list.put(0, event(0, 'assistant/chunk'))
    list.pushPacked(0)
    expect([0, 1, 0.5, -1, Number.NaN, 2].map((seq) => list.isChunk(seq))).toEqual([true, true, false, false, false, false])
  })
})
