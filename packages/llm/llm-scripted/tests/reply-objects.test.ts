import { describe, expect, it } from 'vitest'
import type { LlmFailure } from '@deepseek-ai/dsh-llm'
import { spine } from '@deepseek-ai/dsh-testkit'

// A real adapter parses a fresh usage report and failure per call; the session log deep-freezes what
// it stores. The scripted model hands each call its own copies too, so the log never freezes the
// test's reply objects.

describe("a reply's usage and error objects stay the test's", () => {
  it('a test changes the usage and the error of a reply it scripted, after a run used them, and scripts them again', async () => {
    const usage = { inputTokens: 3, outputTokens: 4 }
    const error: LlmFailure = { code: 'RATE_LIMIT', message: 'slow down' }
    const s = await spine({ model: { script: [{ text: 'one', usage }, { text: 'two', error }] } })
    const agent = await s.agent()
    agent.followup('first')
    await agent.whenIdle()
    agent.followup('second')
    await agent.whenIdle()
    usage.outputTokens = 5
    error.message = 'slower'
    s.model.enqueue({ text: 'three', usage }, { text: 'four', error })
    agent.followup('third')
    await agent.whenIdle()
    agent.followup('fourth')
    await agent.whenIdle()
    const answers = agent.session.events.flatMap((event) =>
      event.type === 'assistant/message' ? [{ usage: event.data.usage, finish: event.data.finishReason }] : [],
    )
    expect(answers).toEqual([
      { usage: { inputTokens: 3, outputTokens: 4 }, finish: { kind: 'stop' } },
      { usage: expect.any(Object), finish: { kind: 'error', failure: { code: 'RATE_LIMIT', message: 'slow down' } } },
      { usage: { inputTokens: 3, outputTokens: 5 }, finish: { kind: 'stop' } },
      { usage: expect.any(Object), finish: { kind: 'error', failure: { code: 'RATE_LIMIT', message: 'slower' } } },
    ])
    for (const handle of s.handles) await handle.dispose()
  })
})
