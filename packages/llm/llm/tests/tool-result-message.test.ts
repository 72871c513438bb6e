import { describe, expect, it } from 'vitest'
import { CallId, MessageId, createToolResultMessage, type ContentBlock } from '@deepseek-ai/dsh-llm'

function frozenThroughout(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true
  if (!Object.isFrozen(value)) return false
  return Object.values(value).every(frozenThroughout)
}

describe('createToolResultMessage', () => {
  it('builds one deep-frozen tool-result block for the call, text content as one text block, isError only when set', () => {
    const ok = createToolResultMessage({ callId: CallId('c1'), content: 'done', id: MessageId('m1') })
    expect(ok).toEqual({
      id: 'm1',
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'done' }] }],
      source: { kind: 'tool', callId: 'c1' },
    })
    expect(frozenThroughout(ok)).toBe(true)
    const failed = createToolResultMessage({ callId: CallId('c2'), content: 'Error: no', isError: true })
    expect(failed.content).toEqual([{ type: 'tool-result', toolCallId: 'c2', content: [{ type: 'text', text: 'Error: no' }], isError: true }])
    expect(failed.id).toMatch(/^msg_/)
    expect(frozenThroughout(failed)).toBe(true)
  })

  it('copies the block array it is given and freezes its blocks: a later push changes nothing', () => {
    const blocks: ContentBlock[] = [{ type: 'text', text: 'a' }]
    const message = createToolResultMessage({ callId: CallId('c3'), content: blocks })
    blocks.push({ type: 'text', text: 'b' })
    expect(message.content[0]).toEqual({ type: 'tool-result', toolCallId: 'c3', content: [{ type: 'text', text: 'a' }] })
    expect(Object.isFrozen(blocks[0])).toBe(true)
    expect(frozenThroughout(message)).toBe(true)
  })
})
