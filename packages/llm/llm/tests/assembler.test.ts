import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { assemble, CallId, createAssembler, type StreamChunk } from '@deepseek-ai/dsh-llm'

const stop: StreamChunk = { type: 'finish', reason: { kind: 'stop' } }
const toolCalls: StreamChunk = { type: 'finish', reason: { kind: 'tool-calls' } }
const id = CallId('call_1')

function malformed(message: string) {
  return { kind: 'error', failure: { code: 'MALFORMED_STREAM', message } }
}

describe('assemble (R-LLM-5)', () => {
  it('concatenates deltas per index and orders blocks by index, whatever the interleaving', () => {
    const chunks: StreamChunk[] = [
      { type: 'reasoning-delta', index: 0, text: 'Let me ' },
      { type: 'tool-call-delta', index: 2, id, name: 'read_file', argumentsDelta: '{"pa' },
      { type: 'text-delta', index: 1, text: 'Reading ' },
      { type: 'reasoning-delta', index: 0, text: 'think.', signature: 'sig-1' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: 'th":"a"}' },
      { type: 'text-delta', index: 1, text: 'it.' },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 1 } },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 7, reasoningTokens: 2 } },
      toolCalls,
    ]
    expect(assemble(chunks)).toEqual({
      content: [
        { type: 'reasoning', text: 'Let me think.', signature: 'sig-1' },
        { type: 'text', text: 'Reading it.' },
        { type: 'tool-call', id, name: 'read_file', arguments: '{"path":"a"}' },
      ],
      usage: { inputTokens: 10, outputTokens: 7, reasoningTokens: 2 },
      finishReason: { kind: 'tool-calls' },
    })
  })

  it('keeps sparse indices in order and skips the gaps', () => {
    expect(assemble([
      { type: 'text-delta', index: 5, text: 'b' },
      { type: 'text-delta', index: 2, text: 'a' },
      stop,
    ]).content).toEqual([{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }])
  })

  it('accepts later tool-call deltas that repeat id and name', () => {
    expect(assemble([
      { type: 'tool-call-delta', index: 0, id, name: 'x', argumentsDelta: '{' },
      { type: 'tool-call-delta', index: 0, id, name: 'x', argumentsDelta: '}' },
      toolCalls,
    ]).content).toEqual([{ type: 'tool-call', id, name: 'x', arguments: '{}' }])
  })

  it('an empty response with only finish has no content and no usage', () => {
    expect(assemble([stop])).toEqual({ content: [], finishReason: { kind: 'stop' } })
  })

  it('keeps every block of a max-tokens finish as streamed, a cut tool call included', () => {
    expect(assemble([
      { type: 'text-delta', index: 0, text: 'partial' },
      { type: 'tool-call-delta', index: 1, id, name: 'x', argumentsDelta: '{"a":' },
      { type: 'finish', reason: { kind: 'max-tokens' } },
    ]).content).toEqual([
      { type: 'text', text: 'partial' },
      { type: 'tool-call', id, name: 'x', arguments: '{"a":' },
    ])
  })

  it('an error or aborted finish keeps only the partial() blocks', () => {
    const body: StreamChunk[] = [
      { type: 'text-delta', index: 0, text: 'so far' },
      { type: 'tool-call-delta', index: 1, id, name: 'x', argumentsDelta: '{"a":1}' },
      { type: 'tool-call-delta', index: 2, id: CallId('call_2'), name: 'y', argumentsDelta: '{"b":' },
    ]
    const failure = { code: 'TRANSPORT' as const, message: 'connection reset' }
    const expected = [
      { type: 'text', text: 'so far' },
      { type: 'tool-call', id, name: 'x', arguments: '{"a":1}' },
    ]
    expect(assemble([...body, { type: 'finish', reason: { kind: 'error', failure } }])).toEqual({
      content: expected,
      finishReason: { kind: 'error', failure },
    })
    expect(assemble([...body, { type: 'finish', reason: { kind: 'aborted' } }])).toEqual({
      content: expected,
      finishReason: { kind: 'aborted' },
    })
  })
})

describe('malformed sequences are a classified failure, never a throw', () => {
  const cases: Array<[string, unknown[], string]> = [
    ['a chunk after finish', [stop, { type: 'text-delta', index: 0, text: 'x' }], 'malformed model stream at chunk 1: a text-delta chunk arrived after finish'],
    ['a second finish', [stop, stop], 'malformed model stream at chunk 1: a finish chunk arrived after finish'],
    ['an index whose kind changes', [{ type: 'text-delta', index: 0, text: 'x' }, { type: 'reasoning-delta', index: 0, text: 'y' }, stop], 'malformed model stream at chunk 1: block 0 started as text and then received a reasoning delta'],
    ['a text index reused by a tool call', [{ type: 'text-delta', index: 0, text: 'x' }, { type: 'tool-call-delta', index: 0, id, name: 'n', argumentsDelta: '' }, stop], 'malformed model stream at chunk 1: block 0 started as text and then received a tool-call delta'],
    ['a tool call index reused by text', [{ type: 'tool-call-delta', index: 0, id, name: 'n', argumentsDelta: '' }, { type: 'text-delta', index: 0, text: 'x' }, stop], 'malformed model stream at chunk 1: block 0 started as tool-call and then received a text delta'],
    ['a first tool-call delta without id', [{ type: 'tool-call-delta', index: 0, name: 'n', argumentsDelta: '{}' }, toolCalls], 'malformed model stream at chunk 0: the first tool-call-delta of block 0 must carry both id and name'],
    ['a first tool-call delta without name', [{ type: 'tool-call-delta', index: 0, id, argumentsDelta: '{}' }, toolCalls], 'malformed model stream at chunk 0: the first tool-call-delta of block 0 must carry both id and name'],
    ['a tool call that changes its id', [{ type: 'tool-call-delta', index: 0, id, name: 'n', argumentsDelta: '' }, { type: 'tool-call-delta', index: 0, id: 'other', argumentsDelta: '' }, toolCalls], 'malformed model stream at chunk 1: tool call 0 changed its id or name mid-stream (call_1/n → other/n)'],
    ['a second tool call with the id of the first', [{ type: 'tool-call-delta', index: 0, id, name: 'n', argumentsDelta: '{}' }, { type: 'tool-call-delta', index: 1, id, name: 'm', argumentsDelta: '{}' }, toolCalls], 'malformed model stream at chunk 1: tool call 1 has the id "call_1" of tool call 0; the ids of one message\'s tool calls must differ'],
    ['a negative index', [{ type: 'text-delta', index: -1, text: 'x' }, stop], 'malformed model stream at chunk 0: index must be a non-negative integer (got -1)'],
    ['a fractional index', [{ type: 'text-delta', index: 0.5, text: 'x' }, stop], 'malformed model stream at chunk 0: index must be a non-negative integer (got 0.5)'],
    ['a missing index', [{ type: 'tool-call-delta', id, name: 'n', argumentsDelta: '' }, stop], 'malformed model stream at chunk 0: index must be a non-negative integer (got undefined)'],
    ['a text delta without text', [{ type: 'text-delta', index: 0 }, stop], 'malformed model stream at chunk 0: text-delta.text must be a string'],
    ['a non-string signature', [{ type: 'reasoning-delta', index: 0, text: '', signature: 1 }, stop], 'malformed model stream at chunk 0: reasoning-delta.signature must be a string'],
    ['a tool delta without argumentsDelta', [{ type: 'tool-call-delta', index: 0, id, name: 'n' }, stop], 'malformed model stream at chunk 0: tool-call-delta.argumentsDelta must be a string'],
    ['an empty tool name', [{ type: 'tool-call-delta', index: 0, id, name: '', argumentsDelta: '' }, stop], 'malformed model stream at chunk 0: tool-call-delta.name must be a non-empty string when set'],
    ['a usage chunk without usage', [{ type: 'usage' }, stop], 'malformed model stream at chunk 0: usage.usage must be an object'],
    ['a finish without reason', [{ type: 'finish' }], 'malformed model stream at chunk 0: finish.reason must be an object with a kind'],
    ['an unknown chunk type', [{ type: 'image-delta', index: 0 }, stop], 'malformed model stream at chunk 0: unknown chunk type "image-delta"'],
    ['a null chunk', [null, stop], 'malformed model stream at chunk 0: expected a chunk object, got null'],
    ['a missing finish', [{ type: 'text-delta', index: 0, text: 'x' }], 'malformed model stream: it ended after 1 chunk(s) without a finish chunk'],
  ]
  for (const [name, chunks, message] of cases) {
    it(name, () => {
      const result = assemble(chunks as StreamChunk[])
      expect(result.finishReason).toEqual(malformed(message))
    })
  }

  it('keeps the safe blocks received before the malformation and ignores everything after it', () => {
    const assembler = createAssembler()
    assembler.push({ type: 'text-delta', index: 0, text: 'kept' })
    assembler.push({ type: 'reasoning-delta', index: 0, text: 'bad' })
    assembler.push({ type: 'text-delta', index: 1, text: 'ignored' })
    assembler.push(stop)
    expect({ settled: assembler.settled, count: assembler.count, result: assembler.result() }).toEqual({
      settled: true,
      count: 4,
      result: {
        content: [{ type: 'text', text: 'kept' }],
        finishReason: malformed('malformed model stream at chunk 1: block 0 started as text and then received a reasoning delta'),
      },
    })
  })
})

describe('duplicate tool-call ids', () => {
  it('a repeated id refuses the message with the first call kept and nothing of the second, whenever it repeats', () => {
    const second = CallId('call_2')
    const result = assemble([
      { type: 'tool-call-delta', index: 0, id, name: 'read_file', argumentsDelta: '{"path":"a"}' },
      { type: 'tool-call-delta', index: 1, id: second, name: 'read_file', argumentsDelta: '{"path":"b"}' },
      { type: 'text-delta', index: 2, text: 'and' },
      { type: 'tool-call-delta', index: 3, id: second, name: 'write_file', argumentsDelta: '{"path":"b"}' },
      { type: 'tool-call-delta', index: 3, argumentsDelta: '' },
      toolCalls,
    ])
    expect(result).toEqual({
      content: [
        { type: 'tool-call', id, name: 'read_file', arguments: '{"path":"a"}' },
        { type: 'tool-call', id: second, name: 'read_file', arguments: '{"path":"b"}' },
        { type: 'text', text: 'and' },
      ],
      finishReason: malformed('malformed model stream at chunk 3: tool call 3 has the id "call_2" of tool call 1; the ids of one message\'s tool calls must differ'),
    })
  })

  it('distinct ids stay accepted, however the deltas of the calls interleave', () => {
    const second = CallId('call_2')
    expect(assemble([
      { type: 'tool-call-delta', index: 0, id, name: 'a', argumentsDelta: '{' },
      { type: 'tool-call-delta', index: 1, id: second, name: 'b', argumentsDelta: '{' },
      { type: 'tool-call-delta', index: 0, id, argumentsDelta: '}' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '}' },
      toolCalls,
    ])).toEqual({
      content: [
        { type: 'tool-call', id, name: 'a', arguments: '{}' },
        { type: 'tool-call', id: second, name: 'b', arguments: '{}' },
      ],
      finishReason: { kind: 'tool-calls' },
    })
  })
})

describe('createAssembler', () => {
  it('reports progress incrementally and result() can be read more than once', () => {
    const assembler = createAssembler()
    assembler.push({ type: 'text-delta', index: 0, text: 'a' })
    expect(assembler.settled).toBe(false)
    expect(assembler.result().finishReason).toEqual(malformed('malformed model stream: it ended after 1 chunk(s) without a finish chunk'))
    assembler.push({ type: 'text-delta', index: 0, text: 'b' })
    assembler.push(stop)
    expect(assembler.settled).toBe(true)
    expect(assembler.failure).toBeUndefined()
    expect(assembler.result()).toEqual({ content: [{ type: 'text', text: 'ab' }], finishReason: { kind: 'stop' } })
    expect(assembler.result()).toEqual(assembler.result())
  })

  it('partial() keeps text and reasoning as received and only the tool calls whose arguments parse', () => {
    const assembler = createAssembler()
    const chunks: StreamChunk[] = [
      { type: 'reasoning-delta', index: 0, text: 'hmm' },
      { type: 'text-delta', index: 1, text: 'Look' },
      { type: 'tool-call-delta', index: 2, id, name: 'list_dir', argumentsDelta: '{"path":"."}' },
      { type: 'tool-call-delta', index: 3, id: CallId('call_2'), name: 'read_file', argumentsDelta: '{"path":' },
      { type: 'tool-call-delta', index: 4, id: CallId('call_3'), name: 'noop', argumentsDelta: '' },
    ]
    for (const chunk of chunks) assembler.push(chunk)
    expect(assembler.partial()).toEqual([
      { type: 'reasoning', text: 'hmm' },
      { type: 'text', text: 'Look' },
      { type: 'tool-call', id, name: 'list_dir', arguments: '{"path":"."}' },
    ])
  })

  it('partial() mid-stream neither loses nor repeats the deltas of blocks that keep growing', () => {
    const assembler = createAssembler()
    assembler.push({ type: 'reasoning-delta', index: 0, text: 'th' })
    assembler.push({ type: 'text-delta', index: 1, text: 'Hel' })
    assembler.push({ type: 'tool-call-delta', index: 2, id, name: 'read_file', argumentsDelta: '{"pa' })
    expect(assembler.partial()).toEqual([
      { type: 'reasoning', text: 'th' },
      { type: 'text', text: 'Hel' },
    ])
    assembler.push({ type: 'reasoning-delta', index: 0, text: 'ink', signature: 'sig' })
    assembler.push({ type: 'text-delta', index: 1, text: 'lo' })
    assembler.push({ type: 'tool-call-delta', index: 2, argumentsDelta: 'th":"a"}' })
    expect(assembler.partial()).toEqual([
      { type: 'reasoning', text: 'think', signature: 'sig' },
      { type: 'text', text: 'Hello' },
      { type: 'tool-call', id, name: 'read_file', arguments: '{"path":"a"}' },
    ])
    assembler.push({ type: 'text-delta', index: 1, text: '!' })
    assembler.push(toolCalls)
    expect(assembler.result()).toEqual({
      content: [
        { type: 'reasoning', text: 'think', signature: 'sig' },
        { type: 'text', text: 'Hello!' },
        { type: 'tool-call', id, name: 'read_file', arguments: '{"path":"a"}' },
      ],
      finishReason: { kind: 'tool-calls' },
    })
  })

  it('property: any split of a text into deltas assembles back to the text', () => {
    fc.assert(
      fc.property(fc.string(), fc.array(fc.nat(), { maxLength: 20 }), (text, cuts) => {
        const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b)
        const pieces: string[] = []
        let from = 0
        for (const p of points) {
          pieces.push(text.slice(from, p))
          from = p
        }
        pieces.push(text.slice(from))
        const chunks: StreamChunk[] = pieces.map((piece) => ({ type: 'text-delta', index: 0, text: piece }))
        expect(assemble([...chunks, stop]).content).toEqual([{ type: 'text', text }])
      }),
    )
  })

  it('a block of many more deltas than one joined piece (4,096) reads back whole, before and after more deltas arrive', () => {
    const deltas = Array.from({ length: 10_000 }, (_, i) => `${i},`)
    const assembler = createAssembler()
    for (const text of deltas.slice(0, 9_000)) assembler.push({ type: 'text-delta', index: 0, text })
    const early = assembler.partial()
    for (const text of deltas.slice(9_000)) assembler.push({ type: 'text-delta', index: 0, text })
    assembler.push({ type: 'reasoning-delta', index: 1, text: 'then' })
    assembler.push(stop)
    expect({ early, result: assembler.result() }).toEqual({
      early: [{ type: 'text', text: deltas.slice(0, 9_000).join('') }],
      result: { content: [{ type: 'text', text: deltas.join('') }, { type: 'reasoning', text: 'then' }], finishReason: { kind: 'stop' } },
    })
  })

  it('assembles from any iterable', () => {
    function* chunks(): Generator<StreamChunk> {
      yield { type: 'text-delta', index: 0, text: 'x' }
      yield stop
    }
    expect(assemble(chunks()).content).toEqual([{ type: 'text', text: 'x' }])
  })

  it('a message with many blocks (past the point where the assembler indexes them) assembles and refuses as one with few', () => {
    const count = 40
    // Blocks opened in reverse index order, then every block fed a second delta in index order: each lookup misses `last`.
    const opening: StreamChunk[] = []
    for (let i = count - 1; i >= 0; i--) {
      opening.push(
        i % 2 === 0
          ? { type: 'text-delta', index: i, text: `t${i}` }
          : { type: 'tool-call-delta', index: i, id: CallId(`c${i}`), name: 'f', argumentsDelta: '{"a":' },
      )
    }
    const second: StreamChunk[] = []
    for (let i = 0; i < count; i++) {
      second.push(i % 2 === 0 ? { type: 'text-delta', index: i, text: '.' } : { type: 'tool-call-delta', index: i, id: CallId(`c${i}`), argumentsDelta: `${i}}` })
    }
    const expected = Array.from({ length: count }, (_, i) =>
      i % 2 === 0 ? { type: 'text', text: `t${i}.` } : { type: 'tool-call', id: `c${i}`, name: 'f', arguments: `{"a":${i}}` },
    )
    expect(assemble([...opening, ...second, toolCalls])).toEqual({ content: expected, finishReason: { kind: 'tool-calls' } })
    // A new call with the id of an earlier one is refused, found among many (the first 16 and the later ones alike).
    for (const earlier of [1, 39]) {
      const duplicate: StreamChunk = { type: 'tool-call-delta', index: count, id: CallId(`c${earlier}`), name: 'f', argumentsDelta: '{}' }
      expect(assemble([...opening, duplicate, toolCalls]).finishReason).toEqual(
        malformed(`malformed model stream at chunk ${count}: tool call ${count} has the id "c${earlier}" of tool call ${earlier}; the ids of one message's tool calls must differ`),
      )
    }
  })
})
