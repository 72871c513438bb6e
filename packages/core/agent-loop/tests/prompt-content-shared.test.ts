import { describe, expect, it } from 'vitest'
import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import { spine } from '@deepseek-ai/dsh-testkit'

/** The content lists of a session's `inbox/enqueue` and `user/message` events, in log order. */
function contentLists(events: readonly { type: string; data: unknown }[]) {
  return events
    .filter((event) => event.type === 'inbox/enqueue' || event.type === 'user/message')
    .map((event) => (event.data as { message: { content: readonly ContentBlock[] } }).message.content)
}

describe("a prompt's content in the log (issue 18: one list per text prompt)", () => {
  it("shares the admitted list of a text prompt between inbox/enqueue and user/message; a caller's list is copied for both", async () => {
    const { agent } = await spine({ model: { script: ['one', 'two'] } })
    const a = await agent()
    a.followup('a text prompt')
    await a.whenIdle()
    const mine: ContentBlock[] = [{ type: 'text', text: 'my blocks' }]
    a.followup(mine)
    await a.whenIdle()
    mine.push({ type: 'text', text: 'added later' })
    const [enqueued, message, enqueuedMine, messageMine] = contentLists([...a.session.events])
    expect([enqueued, message, enqueuedMine, messageMine]).toEqual([
      [{ type: 'text', text: 'a text prompt' }],
      [{ type: 'text', text: 'a text prompt' }],
      [{ type: 'text', text: 'my blocks' }],
      [{ type: 'text', text: 'my blocks' }],
    ])
    expect([message === enqueued, enqueuedMine === mine, messageMine === mine, Object.isFrozen(message), Object.isFrozen(messageMine)]).toEqual([
      true,
      false,
      false,
      true,
      true,
    ])
  })
})
