import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ChunkPack } from '../src/log/chunk-pack'
import { chunkDataShape } from '../src/log/chunk-shape'

const chunk = fc.oneof(
  fc.record({ type: fc.constant('text-delta'), index: fc.nat(3), text: fc.string({ maxLength: 8 }) }),
  fc.record({ type: fc.constant('reasoning-delta'), index: fc.nat(3), text: fc.string({ maxLength: 8 }), signature: fc.string({ maxLength: 4 }) }),
  fc.record({ type: fc.constant('tool-call-delta'), index: fc.nat(3), id: fc.string({ maxLength: 4 }), name: fc.string({ maxLength: 4 }), argumentsDelta: fc.string({ maxLength: 8 }) }),
  fc.record({ type: fc.constant('usage'), usage: fc.record({ inputTokens: fc.nat(), outputTokens: fc.nat() }) }),
)

/** Packs `chunks` (one step per three chunks) and reads every one back. */
function roundTrip(pack: ChunkPack, chunks: readonly Record<string, unknown>[]): unknown[] {
  const indices = chunks.map((value, i) => {
    const data = { turn: 1, step: 1 + Math.floor(i / 3), chunk: structuredClone(value) }
    return pack.add(data.turn, data.step, 1_000 + i, data.chunk, chunkDataShape(data) as never)
  })
  return indices.map((index, i) => pack.event(index, i))
}

describe('ChunkPack sizes: the feedback prime\'s tiny pack behaves as a default one', () => {
  it('property: columns grown from 2 and pages sealed every 4 parts read back the same events as the defaults', () => {
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 60 }), (chunks) => {
        expect(roundTrip(new ChunkPack(2, 4), chunks)).toEqual(roundTrip(new ChunkPack(), chunks))
      }),
      { numRuns: 100 },
    )
  })
})
