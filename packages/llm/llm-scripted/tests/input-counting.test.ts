import { describe, expect, it } from 'vitest'
import { createAssistantMessage, createUserMessage, HISTORY, type Message, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { ScriptedModel } from '@deepseek-ai/dsh-llm-scripted'
import { drain, options } from './helpers'

/**
 * What a session hands a request: a new array per call holding the first
 * `length` entries of a history, linked to it by `HISTORY`. This one also
 * records which entries are read.
 */
function snapshot(entries: readonly Message[], length: number, history: object, reads: number[]): readonly Message[] {
  const array = entries.slice(0, length)
  Object.defineProperty(array, HISTORY, { value: history })
  return new Proxy(array, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads.push(Number(key))
      return Reflect.get(target, key, receiver)
    },
  })
}

/** The estimated input tokens a call reports. */
async function inputTokens(model: ScriptedModel, messages: readonly Message[], system?: string): Promise<number | undefined> {
  const { chunks } = await drain(model.stream(options(messages, system === undefined ? {} : { system })))
  const usage = chunks.find((chunk): chunk is Extract<StreamChunk, { type: 'usage' }> => chunk.type === 'usage')
  return usage?.usage.inputTokens
}

/** A growing conversation: `turns` prompt/answer pairs of varied sizes. */
function conversation(turns: number): Message[] {
  const messages: Message[] = []
  for (let turn = 0; turn < turns; turn++) {
    messages.push(createUserMessage(`question ${turn} ${'x'.repeat(turn * 7)}`))
    messages.push(createAssistantMessage(`answer ${turn} ${'y'.repeat(turn * 3)}`, { source: { kind: 'model', provider: 'p', model: 'm' } }))
  }
  return messages
}

describe('input counting for the usage estimate', () => {
  it('counts snapshots of one history incrementally: each call reads only the messages new since the last one, and reports what a full count reports', async () => {
    const entries = conversation(5)
    const history = {}
    const model = new ScriptedModel({ script: ['a', 'b', 'c', 'd', 'e'], record: false })
    const fresh = new ScriptedModel({ script: ['a', 'b', 'c', 'd', 'e'], record: false })
    const readsPerCall: number[][] = []
    const counted: Array<number | undefined> = []
    const expected: Array<number | undefined> = []
    for (let turn = 1; turn <= 5; turn++) {
      const reads: number[] = []
      counted.push(await inputTokens(model, snapshot(entries, turn * 2 - 1, history, reads), 'sys'))
      readsPerCall.push(reads)
      // A plain copy is a new array each time: counted from the start.
      expected.push(await inputTokens(fresh, entries.slice(0, turn * 2 - 1), 'sys'))
    }
    expect(counted).toEqual(expected)
    expect(counted).toEqual([4, 11, 20, 32, 46])
    expect(readsPerCall).toEqual([[0], [1, 2], [3, 4], [5, 6], [7, 8]])
  })

  it('counts a new history (a compaction rewrote the old one), and a shorter snapshot of the same history, from the start', async () => {
    const entries = conversation(3)
    const model = new ScriptedModel({ script: ['a', 'b', 'c', 'd', 'e'], record: false })
    const reads: number[][] = [[], [], [], []]
    const counted = [
      await inputTokens(model, snapshot(entries, 6, { name: 'before' }, reads[0]!)),
      await inputTokens(model, snapshot(entries.slice(4), 2, { name: 'after compaction' }, reads[1]!)),
      await inputTokens(model, snapshot(entries, 6, { name: 'before' }, reads[2]!)),
    ]
    const shared = {}
    await inputTokens(model, snapshot(entries, 6, shared, []))
    counted.push(await inputTokens(model, snapshot(entries, 3, shared, reads[3]!)))
    const fresh = new ScriptedModel({ script: ['a', 'b', 'c', 'd'], record: false })
    expect(counted).toEqual([
      await inputTokens(fresh, entries.slice(0, 6)),
      await inputTokens(fresh, entries.slice(4, 6)),
      await inputTokens(fresh, entries.slice(0, 6)),
      await inputTokens(fresh, entries.slice(0, 3)),
    ])
    expect(reads).toEqual([
      [0, 1, 2, 3, 4, 5],
      [0, 1],
      [0, 1, 2, 3, 4, 5],
      [0, 1, 2],
    ])
  })

  it('still counts an append-only plain array it sees again incrementally (keyed on its identity)', async () => {
    const entries = conversation(2)
    const history: Message[] = []
    const reads: number[] = []
    const watched = new Proxy(history, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads.push(Number(key))
        return Reflect.get(target, key, receiver)
      },
    })
    const model = new ScriptedModel({ script: ['a', 'b'], record: false })
    history.push(entries[0]!, entries[1]!)
    const first = await inputTokens(model, watched)
    history.push(entries[2]!)
    const second = await inputTokens(model, watched)
    expect([first, second, reads]).toEqual([5, 10, [0, 1, 2]])
  })
})
