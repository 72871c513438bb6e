import { settle } from '@deepseek-ai/dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { Gates, harness, taskCall, toolResults, type Harness } from './helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

const nester = { name: 'nester', description: 'Delegates.', systemPrompt: 'You delegate.', tools: ['task', 'look'] }

describe('limits through the task tool (R-SUB-2)', () => {
  it('a child at the depth limit that calls task reads a DEPTH_LIMIT error result saying what to do, and answers anyway', async () => {
    h = await harness({
      types: [nester],
      subagents: { maxDepth: 1 },
      respond: (request, who) => {
        if (who === 'parent') return request.messages.length === 1 ? taskCall({ description: 'delegate', prompt: 'Delegate.' }) : 'Done.'
        return request.messages.length === 1 ? taskCall({ description: 'deeper', prompt: 'Deeper.' }) : 'I did it myself.'
      },
    })
    const parent = await h.agent()
    parent.followup('Go.')
    await parent.whenIdle()
    expect(toolResults(parent.session)).toEqual([expect.stringMatching(/^ok: I did it myself\.\n\n\[nester subagent: 2 model calls, [\d,]+ input tokens, [\d,]+ output tokens\]$/)])
    const childId = parent.session.events.find((event) => event.type === 'subagent/started')!.data as { sessionId: string }
    const child = await h.root.sessionPersistence.load(childId.sessionId as never)
    expect(toolResults({ events: child.events } as never)).toEqual([
      'DEPTH_LIMIT: Error: subagents nest at most 1 level deep, and this agent is already at depth 1, so it cannot start another; do this part of the work yourself',
    ])
    await h.expectClean()
  })

  it('calls over maxConcurrent queue in model order; the results still come back in model order', async () => {
    const gates = new Gates()
    const call = (prompt: string) => taskCall({ description: prompt, prompt, agentType: 'explore' }).toolCalls![0]!
    h = await harness({
      subagents: { maxConcurrent: 2 },
      respond: (request, who) => (who === 'parent' ? (request.messages.length === 1 ? { toolCalls: [call('one'), call('two'), call('three')] } : 'All done.') : gates.hold(who, request)),
    })
    const parent = await h.agent()
    parent.followup('Three.')
    await gates.reached('one')
    await gates.reached('two')
    for (let i = 0; i < 10; i++) await settle()
    expect(gates.log).toEqual(['one', 'two'])
    expect(h.root.subagents.list(parent).map((run) => run.status)).toEqual(['running', 'running', 'queued'])
    gates.open('two', 'answer two')
    await gates.reached('three')
    gates.open('three', 'answer three')
    gates.open('one', 'answer one')
    await parent.whenIdle()
    expect(toolResults(parent.session).map((line) => line.split('\n')[0])).toEqual(['ok: answer one', 'ok: answer two', 'ok: answer three'])
    await h.expectClean()
  })
})
