import { describe, expect, it } from 'vitest'
import { forgetLoopRequests, loopRequests, watchLoopRequests } from '@deepseek-ai/dsh-llm'
import { echo, spine } from '@deepseek-ai/dsh-testkit'

/** Whether `value` and everything it holds are frozen. */
function deepFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true
  if (!Object.isFrozen(value)) return false
  return Object.values(value).every(deepFrozen)
}

describe("a step's bounds and its request's mark (issue 18)", () => {
  it('logs every event of a turn deep-frozen, the data the loop froze itself and the data the log froze (a prompt-prefix envelope)', async () => {
    const { agent } = await spine({ model: { script: ['Hello', 'Again'] } })
    const a = await agent()
    a.followup('hi')
    await a.whenIdle()
    a.followup({ content: 'and this', contexts: [{ label: 'file', content: [{ type: 'text', text: 'ctx' }] }], placement: 'prompt-prefix' })
    await a.whenIdle()
    const events = [...a.session.events]
    expect(events.filter((event) => event.type === 'user/message').map((event) => 'envelope' in event.data)).toEqual([false, true])
    expect(events.filter((event) => !deepFrozen(event)).map((event) => event.type)).toEqual([])
  })

  it("logs one frozen { turn, step } as both the step/start and the step/end data of a step", async () => {
    const { agent } = await spine({
      tools: [echo],
      model: { script: [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], answer: 'done' }] },
    })
    const a = await agent()
    a.followup('use the tool')
    await a.whenIdle()
    const events = [...a.session.events]
    const bounds = events.filter((event) => event.type === 'step/start' || event.type === 'step/end')
    expect(bounds.map((event) => [event.type, event.data])).toEqual([
      ['step/start', { turn: 1, step: 1 }],
      ['step/end', { turn: 1, step: 1 }],
      ['step/start', { turn: 1, step: 2 }],
      ['step/end', { turn: 1, step: 2 }],
    ])
    expect([bounds[0]!.data === bounds[1]!.data, bounds[2]!.data === bounds[3]!.data, Object.isFrozen(bounds[0]!.data), Object.isFrozen(bounds[2]!.data)]).toEqual([
      true,
      true,
      true,
      true,
    ])
  })

  it("marks each request with the seq of the last event logged before it left (lastSeq)", async () => {
    const { agent } = await spine({
      tools: [echo],
      model: { script: [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], answer: 'done' }] },
    })
    const a = await agent()
    // The set is the process's: an earlier test's agent may have had this session id.
    forgetLoopRequests(a.session.id)
    // The set lists marks only while a reader (the invariant companion, here this test) is attached.
    const unwatch = watchLoopRequests()
    a.followup('use the tool')
    await a.whenIdle()
    const events = [...a.session.events]
    const marks = [...loopRequests(a.session.id)].map(({ meta }) => [meta.turn, meta.step, events[meta.lastSeq]!.type, events[meta.lastSeq + 1]!.type])
    unwatch()
    expect(marks).toEqual([
      [1, 1, 'request/header', 'assistant/chunk'],
      [1, 2, 'step/start', 'assistant/chunk'],
    ])
  })
})
