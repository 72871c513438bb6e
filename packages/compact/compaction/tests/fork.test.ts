import { createUserMessage } from '@deepseek-ai/dsh-llm'
import { SessionId } from '@deepseek-ai/dsh-session'
import { describe, expect, it } from 'vitest'
import { chars, compactionEvents, harness, texts, turn } from './helpers'

const agentOptions = { provider: 'scripted', model: 'test-model' }

describe('fork after compaction (R-CMP-6)', () => {
  it('a fork derives the compacted history (its copy of the log is shifted), compacts again, and resumes', async () => {
    const h = await harness({ window: 10_000, maxOutput: 2_000, respond: () => ({ text: chars(1_000, 'a'), usage: false }) })
    const parent = await h.agent('parent')
    for (const size of [1_000, 1_000, 1_000, 400, 10]) await turn(parent, chars(size, 'p'))
    const summary = compactionEvents(parent.session).find((event) => event.type === 'compaction/summary')!
    const history = JSON.stringify(parent.session.deriveMessages())

    const handle = await h.root.agents.create({ sessionId: SessionId('child'), seed: h.root.sessions.fork(parent.session).events, agentOptions })
    const child = handle.agent
    // The child's log holds the parent's events one seq later (behind its own session/meta)...
    const copied = child.session.events.find((event) => event.type === 'compaction/summary')!
    expect(copied.seq).toBe(summary.seq + 1)
    expect(copied.data).toEqual(summary.data)
    // ...and derives exactly the parent's history.
    expect(JSON.stringify(child.session.deriveMessages())).toBe(history)

    await turn(child, 'child one')
    expect(texts(h.agentRequests.at(-1)!.messages)).toEqual([...texts(parent.session.deriveMessages()), 'user: child one'])
    // The child goes on and compacts again over its own log.
    for (const size of [1_000, 1_000, 1_000]) await turn(child, chars(size, 'c'))
    // (the inherited summary and two of its own)
    expect(compactionEvents(child.session).filter((event) => event.type === 'compaction/summary')).toHaveLength(3)
    const childHistory = JSON.stringify(child.session.deriveMessages())
    await h.expectClean()

    // And resumes to the same history.
    await handle.dispose()
    const resumed = await h.resume('child')
    expect(JSON.stringify(resumed.session.deriveMessages())).toBe(childHistory)
    await turn(resumed, 'after resume')
    await h.expectClean()
    await h.dispose()
  })

  it('the projector shifts the stored range by the fork\'s offset, so the copied summary shadows the same events', async () => {
    const h = await harness()
    const parent = h.root.sessions.create('p')
    const a = createUserMessage('A')
    const b = createUserMessage('B')
    const summary = createUserMessage('S', { source: { kind: 'plugin', plugin: 'compaction' } })
    parent.append('turn/start', { turn: 1, trigger: { kind: 'injection' } })
    parent.append('user/message', { message: a })
    parent.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    parent.append('turn/start', { turn: 2, trigger: { kind: 'injection' } })
    parent.append('user/message', { message: b }) // seq 5: the last event before the cut
    parent.append('turn/end', { turn: 2, reason: { kind: 'completed' } })
    parent.append('compaction/summary', {
      from: 2,
      to: 6,
      at: 7,
      summary: 'S',
      messages: [summary],
      userMessages: { kept: ['A', 'B'], omitted: 0, omittedTokens: 0 },
      usage: { inputTokens: 1, outputTokens: 1 },
      calls: 1,
      route: { provider: 'scripted', model: 'test-model' },
      tokensBefore: 2,
      tokensAfter: 1,
    })
    expect(parent.deriveMessages()).toEqual([summary])
    // In the fork every seq is one later: without the shift, [2, 6) would leave B (now at 6) in place.
    const child = h.root.sessions.fork(parent)
    expect(child.events[6]!.data).toEqual({ message: b })
    expect(child.deriveMessages()).toEqual([summary])
    await h.dispose()
  })
})
