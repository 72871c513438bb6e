import { describe, expect, it } from 'vitest'
import RequestReconstruction, { REQUEST_RECONSTRUCTION } from '@deepseek-ai/dsh-agent-loop/invariant'
import Invariants from '@deepseek-ai/dsh-invariants'
import { loopRequests, type LlmRequest } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent, Session } from '@deepseek-ai/dsh-session'
import { spine } from '@deepseek-ai/dsh-testkit'

// Its own file: the identity set is the process's, and the companions other files load stay attached to it.

/** A request built by hand that matches `session`'s last header, with `messages`. */
function handRequest(session: Session, messages: LlmRequest['messages']): LlmRequest {
  const headers = session.events.filter((event): event is AnySessionEvent & { type: 'request/header' } => event.type === 'request/header')
  const { provider, model, system, tools } = headers[headers.length - 1]!.data
  return { provider, model, system, tools, messages, sessionId: session.id }
}

describe('dsh-agent-loop/invariant and the identity set (issue 18: nothing listed without a reader)', () => {
  it("has the loop's requests listed only while it is loaded: loaded late it checks what is marked after, unloaded nothing is listed", async () => {
    const { root, agent } = await spine({ model: { script: ['one', 'two', 'three'] } })
    let tamper = false
    let bad: LlmRequest | undefined
    root.on('agent/post-step', (subject, turn, step) => {
      if (!tamper) return
      const session = subject.session
      const [first, answer] = session.deriveMessages()
      bad = handRequest(session, [{ ...first!, content: [{ type: 'text' as const, text: 'tampered' }] }, answer!])
      root.llm.markLoopRequest(bad, { sessionId: session.id, turn, step, lastSeq: session.events.length - 1, messageCount: 2 })
    })
    const a = await agent()
    a.followup('first')
    await a.whenIdle()
    // No reader: the loop's mark is remembered by identity only.
    expect([...loopRequests(a.session.id)]).toEqual([])

    await root.plugin(Invariants, { policy: 'collect' })
    const companion = root.plugin(RequestReconstruction)
    await companion
    tamper = true
    a.followup('second')
    await a.whenIdle()
    expect(root.invariants.violations.map((violation) => [violation.invariant, (violation.details as { turn: number }).turn])).toEqual([[REQUEST_RECONSTRUCTION, 2]])
    expect(await root.invariants.check()).toEqual([])

    await companion.dispose()
    // `bad` is now turn 3's hand-marked request: marked, but not listed.
    a.followup('third')
    await a.whenIdle()
    expect([bad!.messages.length, root.llm.isLoopRequest(bad), [...loopRequests(a.session.id)]]).toEqual([2, true, []])
  })
})
