import { trace } from '@deepseek-ai/dsh-testkit'
import type { ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import { describe, expect, it } from 'vitest'
import { CompactionError } from '../src'
import { chars, compactionEvents, harness, texts, turn } from './helpers'

const overflow: ScriptReply = { error: { code: 'CONTEXT_OVERFLOW', message: 'This model maximum context length is 1000 tokens.' } }

/** Three 2,000-token turns (window 10,000), then the agent's requests answer `replies` in order (then `ok`). */
async function overflowing(replies: ScriptReply[], summary?: () => ScriptReply) {
  const queue = [...replies]
  const h = await harness({
    window: 10_000,
    maxOutput: 2_000,
    config: { auto: false },
    respond: (_request, call) => (call < 3 ? { text: chars(1_000, 'a'), usage: false } : (queue.shift() ?? { text: 'ok', usage: false })),
    ...(summary ? { summary } : {}),
  })
  const agent = await h.agent()
  const errors: unknown[] = []
  h.root.on('agent/error', (_agent, _turn, _step, error) => void errors.push(error))
  for (const prompt of ['one', 'two', 'six']) await turn(agent, chars(997, prompt[0]) + prompt)
  return { h, agent, errors }
}

describe('overflow recovery (R-CMP-3)', () => {
  it('compacts and retries the step once: overflow, compaction, then success in the same turn', async () => {
    const { h, agent, errors } = await overflowing([overflow])
    await turn(agent, 'four')
    expect(trace(agent.session).slice(-13)).toEqual([
      'turn/start 4 prompt',
      'step/start 4.1',
      'user/message "four"',
      'assistant/chunk ×2',
      'assistant/message "" error CONTEXT_OVERFLOW',
      'step/end 4.1',
      'compaction/start',
      'compaction/summary',
      'step/start 4.2',
      'assistant/chunk ×2',
      'assistant/message "ok" stop',
      'step/end 4.2',
      'turn/end 4 completed',
    ])
    const start = compactionEvents(agent.session)[0]!.data as Record<string, unknown>
    expect(start).toMatchObject({ reason: 'overflow', turn: 4, step: 2 })
    expect(start.why).toBe(
      'the provider refused turn 4 step 1 with CONTEXT_OVERFLOW (This model maximum context length is 1000 tokens.); the request was about 1,518 tokens (estimated) against a window of 10,000',
    )
    // The retry sent the summary and the tail (with the overflow, half the usual tail: 1,000 tokens, just the new prompt).
    expect(texts(h.agentRequests.at(-1)!.messages).slice(1)).toEqual(['user: four'])
    expect(h.agentRequests.at(-1)!.messages[0]!.source).toEqual({ kind: 'plugin', plugin: 'compaction' })
    expect(errors).toEqual([])
    await h.expectClean()
  })

  it('fails the turn with a clear error when the retried request overflows again', async () => {
    const { h, agent, errors } = await overflowing([overflow, overflow])
    await turn(agent, 'four')
    const lines = trace(agent.session)
    expect(lines.filter((line) => line.startsWith('compaction/') || line.startsWith('turn/end 4'))).toEqual([
      'compaction/start',
      'compaction/summary',
      'turn/end 4 error CONTEXT_OVERFLOW',
    ])
    const end = agent.session.events.at(-1)!.data as { reason: { failure: { code: string; message: string } } }
    expect(end.reason.failure).toEqual({
      code: 'CONTEXT_OVERFLOW',
      message:
        'the request to scripted/test-model did not fit its context window even after compaction: it was about 515 tokens (estimated) against a window of 10,000. The provider said: This model maximum context length is 1000 tokens. Start a new session, or use a model with a larger window',
    })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(CompactionError)
    // Two agent requests in turn 4 (the first and the retry), one summary, then nothing more.
    expect(h.agentRequests).toHaveLength(5)
    expect(h.summaryRequests).toHaveLength(1)
    await h.expectClean()
  })

  it('fails the turn clearly when there is nothing to compact', async () => {
    const h = await harness({ config: { auto: false }, respond: () => overflow })
    const agent = await h.agent()
    await turn(agent, 'hello')
    const end = agent.session.events.at(-1)!.data as { reason: { failure: { code: string; message: string } } }
    expect(end.reason.failure.code).toBe('CONTEXT_OVERFLOW')
    expect(end.reason.failure.message).toBe(
      'the request to scripted/test-model did not fit its context window (about 18 tokens (estimated) against a window of 1,000) and compaction could not shrink it: nothing to compact: the history after the last summary (about 5 tokens) is all within the protected tail (100 tokens). The provider said: This model maximum context length is 1000 tokens',
    )
    expect(compactionEvents(agent.session)).toEqual([])
    await h.expectClean()
  })

  it('fails the turn clearly, and loses nothing, when the summary call fails', async () => {
    const { h, agent } = await overflowing([overflow], () => ({ error: { code: 'SERVER', message: 'the summarizer is down' } }))
    const before = JSON.stringify(agent.session.deriveMessages())
    await turn(agent, 'four')
    expect(compactionEvents(agent.session).map((event) => [event.type, (event.data as { code?: string }).code])).toEqual([
      ['compaction/start', undefined],
      ['compaction/failed', 'SUMMARY_FAILED'],
    ])
    const end = agent.session.events.at(-1)!.data as { reason: { failure: { code: string; message: string } } }
    expect(end.reason.failure.code).toBe('CONTEXT_OVERFLOW')
    expect(end.reason.failure.message).toMatch(/and compaction failed: the summary call to scripted\/test-model failed \(SERVER: the summarizer is down\); nothing was compacted\./)
    // The history is what it was, plus the new prompt.
    expect(JSON.stringify(agent.session.deriveMessages().slice(0, -1))).toBe(before)
    await h.expectClean()
  })
})
