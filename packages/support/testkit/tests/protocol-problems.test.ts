import { describe, expect, it } from 'vitest'
import type { StreamChunk } from '@deepseek-ai/dsh-llm'
import { idealChunks, protocolProblems, type PlayedStream } from '@deepseek-ai/dsh-testkit'

const stop: StreamChunk = { type: 'finish', reason: { kind: 'stop' } }
const ended = (...chunks: unknown[]): PlayedStream => ({ chunks: chunks as StreamChunk[], ending: 'ended' })
const assemblerRefuses = expect.stringMatching(/^dsh-llm's assembler refuses the sequence: malformed model stream at chunk \d+: /)

// The conformance suite is only as strict as this checker: each rule of R-LLM-6 must fail a stream that breaks it.
describe('protocolProblems (R-LLM-6)', () => {
  it('finds nothing wrong with the reference stream of interleaved tool calls, usage and a finish', () => {
    const chunks = idealChunks(
      [
        { type: 'reasoning', text: 'Plan.' },
        { type: 'tool-call', call: 0, id: 'a', name: 'read', arguments: '{"path":' },
        { type: 'tool-call', call: 1, id: 'b', name: 'read', arguments: '{"path":"b"}' },
        { type: 'tool-call', call: 0, arguments: '"a"}' },
        { type: 'usage', usage: { inputTokens: 5, outputTokens: 1 } },
        { type: 'usage', usage: { inputTokens: 5, outputTokens: 9 } },
      ],
      'tool-calls',
    )
    expect(protocolProblems({ chunks, ending: 'ended' })).toEqual([])
  })

  it('exactly one finish, and it is the last chunk', () => {
    expect(protocolProblems(ended({ type: 'text-delta', index: 0, text: 'a' }))).toEqual(['the stream ended after 1 chunk(s) without a finish'])
    expect(protocolProblems(ended(stop, { type: 'text-delta', index: 0, text: 'late' }))).toEqual([
      'chunk 1 (text-delta) came after the finish at chunk 0',
      assemblerRefuses,
    ])
    expect(protocolProblems(ended(stop, stop))).toEqual(['chunk 1 (finish) came after the finish at chunk 0', 'chunk 1 is a second finish', assemblerRefuses])
    expect(protocolProblems({ chunks: [stop], ending: 'threw', error: new Error('late') })).toEqual(['the stream threw after its finish at chunk 0'])
  })

  it('a stream that threw, or that its reader stopped, needs no finish', () => {
    const text: StreamChunk = { type: 'text-delta', index: 0, text: 'a' }
    expect(protocolProblems({ chunks: [text], ending: 'threw', error: new Error('cut') })).toEqual([])
    expect(protocolProblems({ chunks: [text], ending: 'stopped' })).toEqual([])
  })

  it('a block keeps the kind of its first chunk, at a valid index', () => {
    expect(protocolProblems(ended({ type: 'text-delta', index: 0, text: 'a' }, { type: 'reasoning-delta', index: 0, text: 'b' }, stop))).toEqual([
      'chunk 1: block 0 started with a text-delta and then got a reasoning-delta',
      assemblerRefuses,
    ])
    expect(protocolProblems(ended({ type: 'text-delta', index: -1, text: 'a' }, stop))).toEqual([
      'chunk 0: index must be a non-negative integer (got -1)',
      assemblerRefuses,
    ])
  })

  it('redacted reasoning is a known block: its data a string, its kind fixed like any other', () => {
    const redacted = { type: 'redacted-reasoning-delta', index: 0, data: 'EmwKAhgB+/=' }
    expect(protocolProblems(ended(redacted, { type: 'text-delta', index: 1, text: 'a' }, stop))).toEqual([])
    expect(protocolProblems(ended({ ...redacted, data: 7 }, stop))).toEqual(['chunk 0: data must be a string', assemblerRefuses])
    expect(protocolProblems(ended(redacted, { type: 'reasoning-delta', index: 0, text: 'b' }, stop))).toEqual([
      'chunk 1: block 0 started with a redacted-reasoning-delta and then got a reasoning-delta',
      assemblerRefuses,
    ])
  })

  it('the first tool-call delta of a block carries id and name; later ones keep them; ids differ', () => {
    expect(protocolProblems(ended({ type: 'tool-call-delta', index: 0, name: 'read', argumentsDelta: '{}' }, stop))).toEqual([
      'chunk 0: the first tool-call-delta of block 0 must carry its id and name',
      assemblerRefuses,
    ])
    expect(
      protocolProblems(
        ended(
          { type: 'tool-call-delta', index: 0, id: 'a', name: 'read', argumentsDelta: '{' },
          { type: 'tool-call-delta', index: 0, id: 'b', argumentsDelta: '}' },
          stop,
        ),
      ),
    ).toEqual(['chunk 1: tool call 0 changed its id or name mid-stream', assemblerRefuses])
    expect(
      protocolProblems(
        ended(
          { type: 'tool-call-delta', index: 0, id: 'same', name: 'read', argumentsDelta: '{}' },
          { type: 'tool-call-delta', index: 1, id: 'same', name: 'read', argumentsDelta: '{}' },
          stop,
        ),
      ),
    ).toEqual(['chunk 1: tool call 1 has the id "same" of tool call 0', assemblerRefuses])
  })

  it('usage snapshots are cumulative counts', () => {
    expect(
      protocolProblems(ended({ type: 'usage', usage: { inputTokens: 5, outputTokens: 9 } }, { type: 'usage', usage: { inputTokens: 5, outputTokens: 3 } }, stop)),
    ).toEqual(['chunk 1: usage.outputTokens went down from 9 to 3: usage snapshots are cumulative'])
    expect(protocolProblems(ended({ type: 'usage', usage: { inputTokens: 1.5, outputTokens: 0 } }, stop))).toEqual([
      'chunk 0: usage.inputTokens must be a non-negative integer (got 1.5)',
    ])
  })

  it('a finish has a known kind, and a failure a code and a message', () => {
    expect(protocolProblems(ended({ type: 'finish', reason: { kind: 'done' } }))).toEqual([
      'chunk 0: the finish reason must have a kind among stop, tool-calls, max-tokens, aborted, error',
    ])
    expect(protocolProblems(ended({ type: 'finish', reason: { kind: 'error', failure: { code: 'SERVER', message: '' } } }))).toEqual([
      'chunk 0: the error finish: its failure needs a message a person can act on',
    ])
  })

  it('unknown chunks and non-objects are problems', () => {
    expect(protocolProblems(ended({ type: 'image-delta', index: 0 }, stop))).toEqual(['chunk 0 has an unknown type "image-delta"', assemblerRefuses])
    expect(protocolProblems(ended(null, stop))).toEqual(['chunk 0 is not a chunk object', assemblerRefuses])
  })
})
