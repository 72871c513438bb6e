// A chunk an adapter yields that passes dsh-llm's stream guard (which checks the protocol, not every
// field, to keep the per-chunk path cheap) but that the log's data check refuses (a usage field set to
// undefined, which JSON drops: easy to write in a hand-made adapter) is that adapter's broken stream:
// the step ends MALFORMED_STREAM (an ordinary turn failure, R-ERR-1), its finish logged in place of the
// refused chunk, the adapter is stopped, and the agent goes on taking work. It used to fail the agent
// for good (APPEND_REFUSED): the person had to dispose it and resume the session.
import { describe, expect, it } from 'vitest'
import type { StreamChunk } from '@deepseek-ai/dsh-llm'
import { spine, trace } from '@deepseek-ai/dsh-testkit'

describe('a chunk the log refuses ends the step as a malformed stream, not the agent (R-ERR-1)', () => {
  it('a usage chunk with a field JSON drops: turn 1 fails MALFORMED_STREAM naming the refusal, turn 2 is answered', async () => {
    const spoiled = [
      { type: 'text-delta', index: 0, text: 'half an answer' },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 2, cacheReadTokens: undefined } },
      { type: 'finish', reason: { kind: 'stop' } },
    ] as unknown as StreamChunk[]
    const s = await spine({ model: { script: [{ chunks: spoiled }, 'second'] } })
    const a = await s.agent()
    const errors: string[] = []
    s.root.on('agent/error', (_agent, turn, step, error) => errors.push(`${turn}.${step} ${(error as { code?: string }).code}`))

    a.followup('go')
    await a.whenIdle()
    a.followup('again')
    await a.whenIdle()

    expect(trace(a.session)).toEqual([
      'inbox/enqueue next-turn "go"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "go"',
      'request/header initial scripted/test-model',
      // The text delta, then the step's own finish in place of the refused usage chunk.
      'assistant/chunk ×2',
      // A failed answer's message carries no content, as for any failed call (the chunks keep the text).
      'assistant/message "" error MALFORMED_STREAM',
      'step/end 1.1',
      'turn/end 1 error MALFORMED_STREAM',
      'inbox/enqueue next-turn "again"',
      'inbox/dequeue',
      'turn/start 2 prompt',
      'step/start 2.1',
      'user/message "again"',
      'assistant/chunk ×3',
      'assistant/message "second" stop',
      'step/end 2.1',
      'turn/end 2 completed',
    ])
    const finish = a.session.events.find((event) => event.type === 'assistant/chunk' && event.data.chunk.type === 'finish')
    expect(finish?.data).toMatchObject({
      turn: 1,
      step: 1,
      chunk: { type: 'finish', reason: { kind: 'error', failure: { code: 'MALFORMED_STREAM', message: expect.stringContaining('cacheReadTokens is undefined') } } },
    })
    // Reported as the turn's error, like any failed call; the agent has not failed.
    expect(errors).toEqual(['1.1 MALFORMED_STREAM'])
    for (const handle of s.handles) await handle.dispose()
  })
})
