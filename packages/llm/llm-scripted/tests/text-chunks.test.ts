import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { StreamChunk } from '@deepseek-ai/dsh-llm'
import { ScriptedModel, type ScriptReply, type UsageOption } from '@deepseek-ai/dsh-llm-scripted'
import { options } from './helpers'

/** Every result of the synchronous view of a call answering `reply`, up to and including the first two done ones, with each result's keys in order. */
function results(reply: ScriptReply, usage: UsageOption, stopAfter = Infinity): Array<{ keys: string[]; result: IteratorResult<StreamChunk, unknown> }> {
  const stream = new ScriptedModel({ script: [reply], usage, textChunking: 3 }).stream(options()) as unknown as Iterable<StreamChunk>
  const iterator = stream[Symbol.iterator]()
  const out: Array<{ keys: string[]; result: IteratorResult<StreamChunk, unknown> }> = []
  let dones = 0
  while (dones < 2) {
    const result = out.length === stopAfter ? iterator.return!() : iterator.next()
    out.push({ keys: Object.keys(result), result })
    if (result.done) dones++
  }
  return out
}

const ending = fc.constantFrom<Partial<ScriptReply>>(
  {},
  { finish: 'stop' },
  { finish: 'max-tokens' },
  { error: { code: 'RATE_LIMIT', message: 'slow down' } },
  { noFinish: true },
)

const textReply = fc
  .tuple(
    fc.record(
      {
        text: fc.oneof(fc.string({ maxLength: 20 }), fc.array(fc.string({ maxLength: 6 }), { maxLength: 8 })),
        usage: fc.oneof(fc.constant(false as const), fc.record({ inputTokens: fc.nat(1000), outputTokens: fc.nat(1000) })),
      },
      { requiredKeys: [] },
    ),
    ending,
  )
  .map(([content, end]): ScriptReply => ({ ...content, ...end }))

const usageOption = fc.oneof(fc.boolean(), fc.constant({ inputTokens: 100, outputTokens: 20 }))

describe('a reply of text alone streams as any other reply', () => {
  it('the same results (chunks, usage, finish, done after the end, key order) as the same reply played with an empty reasoning', () => {
    fc.assert(
      fc.property(textReply, usageOption, fc.option(fc.nat(6), { nil: undefined }), (reply, usage, stopAfter) => {
        // `reasoning: ''` adds no chunk but takes the general path: the oracle.
        expect(results(reply, usage, stopAfter)).toEqual(results({ ...reply, reasoning: '' }, usage, stopAfter))
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 200) },
    )
  })

  it('a long answer: every delta in order, then usage and finish, then done', () => {
    const text = Array.from({ length: 5000 }, (_, i) => `w${i} `)
    const played = results({ text }, { inputTokens: 1, outputTokens: 2 })
    expect(played.map((entry) => entry.result)).toEqual([
      ...text.map((piece) => ({ done: false, value: { type: 'text-delta', index: 0, text: piece } })),
      { done: false, value: { type: 'usage', usage: { inputTokens: 1, outputTokens: 2 } } },
      { done: false, value: { type: 'finish', reason: { kind: 'stop' } } },
      { done: true, value: undefined },
      { done: true, value: undefined },
    ])
  })
})
