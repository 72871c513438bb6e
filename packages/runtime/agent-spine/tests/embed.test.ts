import { describe, expect, it } from 'vitest'
import { runEmbedded } from '../examples/embed'
import { trace } from './helpers'

describe('the embedding example (examples/embed.ts)', () => {
  it('mounts the spine with an adapter, runs a tool, and its first plugin stops the turn after 2 steps', async () => {
    const { answer, events } = await runEmbedded('What is 2 + 3? Check it as often as you like.')
    expect(trace(events)).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "What is 2 + 3? Check it as often as you like."',
      'assistant/chunk ×4',
      'assistant/message tool-calls calls add_numbers',
      'tool/call add_numbers',
      'tool/result ok',
      'step/end 1.1',
      'step/start 1.2',
      'assistant/chunk ×4',
      'assistant/message tool-calls calls add_numbers',
      'tool/call add_numbers',
      'tool/result ok',
      'step/end 1.2',
      // The model wanted a third step; StepBudget said no.
      'turn/end 1 stopped by step-budget',
    ])
    const results = events.flatMap((event) => (event.type === 'tool/result' ? [event.data.message.content] : []))
    expect(results).toEqual([
      [{ type: 'tool-result', toolCallId: 'call_0_0', content: [{ type: 'text', text: '5' }] }],
      [{ type: 'tool-result', toolCallId: 'call_1_0', content: [{ type: 'text', text: '5' }] }],
    ])
    expect(answer).toBe('')
  })
})
