import { describe, expect, it } from 'vitest'
import { assemble, CallId, contentProblem, createAssembler, type StreamChunk } from '@deepseek-ai/dsh-llm'

const data = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP+='

describe('redacted reasoning in the shared vocabulary (R-LLM-6)', () => {
  it('a redacted-reasoning-delta builds a redacted-reasoning block, its data pieces joined, in index order beside signed reasoning', () => {
    const chunks: StreamChunk[] = [
      { type: 'reasoning-delta', index: 0, text: 'Plan: read the file.' },
      { type: 'reasoning-delta', index: 0, text: '', signature: 'sig-0' },
      { type: 'redacted-reasoning-delta', index: 1, data: data.slice(0, 20) },
      { type: 'redacted-reasoning-delta', index: 1, data: data.slice(20) },
      { type: 'text-delta', index: 2, text: 'Reading.' },
      { type: 'tool-call-delta', index: 3, id: CallId('toolu_1'), name: 'read', argumentsDelta: '{}' },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ]
    expect(assemble(chunks)).toEqual({
      content: [
        { type: 'reasoning', text: 'Plan: read the file.', signature: 'sig-0' },
        { type: 'redacted-reasoning', data },
        { type: 'text', text: 'Reading.' },
        { type: 'tool-call', id: CallId('toolu_1'), name: 'read', arguments: '{}' },
      ],
      finishReason: { kind: 'tool-calls' },
    })
  })

  it('a cut stream keeps its redacted reasoning in partial(), as it keeps reasoning text', () => {
    const assembler = createAssembler()
    assembler.push({ type: 'redacted-reasoning-delta', index: 0, data })
    assembler.push({ type: 'text-delta', index: 1, text: 'Half' })
    assembler.push({ type: 'finish', reason: { kind: 'aborted' } })
    expect(assembler.result()).toEqual({
      content: [{ type: 'redacted-reasoning', data }, { type: 'text', text: 'Half' }],
      finishReason: { kind: 'aborted' },
    })
  })

  it('a block that changes kind, or redacted data that is not a string, is MALFORMED_STREAM (R-LLM-5)', () => {
    expect(assemble([
      { type: 'redacted-reasoning-delta', index: 0, data },
      { type: 'reasoning-delta', index: 0, text: 'x' },
    ]).finishReason).toEqual({
      kind: 'error',
      failure: { code: 'MALFORMED_STREAM', message: 'malformed model stream at chunk 1: block 0 started as redacted-reasoning and then received a reasoning delta' },
    })
    expect(assemble([{ type: 'redacted-reasoning-delta', index: 0, data: 7 } as never]).finishReason).toEqual({
      kind: 'error',
      failure: { code: 'MALFORMED_STREAM', message: 'malformed model stream at chunk 0: redacted-reasoning-delta.data must be a string' },
    })
  })

  it('contentProblem checks a redacted-reasoning block field by field', () => {
    expect(contentProblem([{ type: 'redacted-reasoning', data }])).toBeUndefined()
    expect(contentProblem([{ type: 'text', text: 'a' }, { type: 'redacted-reasoning' }])).toBe('content[1].data must be a string')
  })
})
