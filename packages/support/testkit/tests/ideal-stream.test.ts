import { describe, expect, it } from 'vitest'
import { idealChunks } from '@deepseek-ai/dsh-testkit'

describe('idealChunks: the reference stream the conformance suite expects', () => {
  it('numbers blocks in order of first appearance, one chunk per event, id and name on a call\'s first delta only', () => {
    expect(
      idealChunks(
        [
          { type: 'reasoning', text: 'Hmm.' },
          { type: 'text', text: 'Two' },
          { type: 'tool-call', call: 0, id: 'a', name: 'read', arguments: '{"p":' },
          { type: 'tool-call', call: 1, id: 'b', name: 'grep', arguments: '{}' },
          { type: 'text', text: ' calls.' },
          { type: 'tool-call', call: 0, arguments: '1}' },
          { type: 'usage', usage: { inputTokens: 3, outputTokens: 4 } },
        ],
        'tool-calls',
      ),
    ).toEqual([
      { type: 'reasoning-delta', index: 0, text: 'Hmm.' },
      { type: 'text-delta', index: 1, text: 'Two' },
      { type: 'tool-call-delta', index: 2, id: 'a', name: 'read', argumentsDelta: '{"p":' },
      { type: 'tool-call-delta', index: 3, id: 'b', name: 'grep', argumentsDelta: '{}' },
      { type: 'text-delta', index: 1, text: ' calls.' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '1}' },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 4 } },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ])
  })

  it('has no finish when none is given (a held stream)', () => {
    expect(idealChunks([{ type: 'text', text: 'so far' }])).toEqual([{ type: 'text-delta', index: 0, text: 'so far' }])
  })
})
