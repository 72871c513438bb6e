import { settle, trace } from '@deepseek-ai/dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { Gates, harness, records, taskCall, toolResults, type Harness } from './helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

const call = (prompt: string, agentType = 'explore') => ({ name: 'task', arguments: { description: `do ${prompt}`, prompt, agentType } })

describe('a foreground task: the child answers, its answer is the result (R-SUB-3, R-SUB-1, R-SUB-5)', () => {
  it('the child runs in its own session linked to the parent, and its final answer and usage are the call result', async () => {
    h = await harness({
      respond: (request, who) => {
        if (who === 'parent') return request.messages.length === 1 ? taskCall({ description: 'find it', prompt: 'Find the answer.' }) : 'The child says 42.'
        return request.messages.length === 1
          ? { toolCalls: [{ name: 'look', arguments: { at: 'the sky' } }], usage: { inputTokens: 100, outputTokens: 10 } }
          : { text: 'It is 42.', usage: { inputTokens: 150, outputTokens: 5 } }
      },
    })
    const parent = await h.agent()
    parent.followup('What is the answer?')
    await parent.whenIdle()

    expect(toolResults(parent.session)).toEqual(['ok: It is 42.\n\n[explore subagent: 2 model calls, 250 input tokens, 15 output tokens]'])
    expect(records(parent.session, 'subagent/')).toEqual([
      { type: 'subagent/started', runId: '#1', sessionId: 'p-sub-*', agentType: 'explore', description: 'find it', background: false, callId: 'call_0_0' },
      { type: 'subagent/finished', runId: '#1', status: 'completed', usage: { inputTokens: 250, outputTokens: 15 }, modelCalls: 2 },
    ])
    // The child's own log: its meta names the parent; its first prompt is the task's prompt; it saw only its type's tools.
    const started = parent.session.events.find((event) => event.type === 'subagent/started')!.data as { sessionId: string }
    const child = await h.root.sessionPersistence.load(started.sessionId as never)
    expect(child.events[0]!.data).toMatchObject({ parentSession: 'p' })
    const childRequest = h.model.requests.find((request) => String(request.sessionId) === started.sessionId)!
    expect(childRequest.tools?.map((tool) => tool.name)).toEqual(['look'])
    expect(childRequest.system).toContain('You explore. Report what you found.')
    expect(childRequest.system).toContain('You are a subagent')
    expect(h.root.agents.get(started.sessionId as never)).toBeUndefined()
    await h.expectClean()
  })

  it('three read-only children of one step run at once, and their results come back in model order', async () => {
    const gates = new Gates()
    h = await harness({
      respond: (request, who) => {
        if (who === 'parent') return request.messages.length === 1 ? { toolCalls: [call('one'), call('two'), call('three')] } : 'All three answered.'
        return gates.hold(who)
      },
    })
    const parent = await h.agent()
    parent.followup('Ask three.')
    // Each child holds in its first model call: all three get there only if they overlap.
    await Promise.all(['one', 'two', 'three'].map((key) => gates.reached(key)))
    gates.open('three', 'answer three')
    gates.open('two', 'answer two')
    gates.open('one', 'answer one')
    await parent.whenIdle()
    expect(toolResults(parent.session).map((line) => line.split('\n')[0])).toEqual(['ok: answer one', 'ok: answer two', 'ok: answer three'])
    expect(h.root.tools.isConcurrencySafe({ name: 'task', arguments: JSON.stringify({ description: 'x', prompt: 'x', agentType: 'explore' }) })).toBe(true)
    await h.expectClean()
  })

  it('a child type that may write runs exclusive: the next call starts only after it answered', async () => {
    const gates = new Gates()
    h = await harness({
      respond: (request, who) => {
        if (who === 'parent') return request.messages.length === 1 ? { toolCalls: [call('first', 'writer'), call('second', 'explore')] } : 'Done.'
        return gates.hold(who)
      },
    })
    const parent = await h.agent()
    parent.followup('Write, then look.')
    await gates.reached('first')
    for (let i = 0; i < 20; i++) await settle()
    expect(gates.log).toEqual(['first'])
    gates.open('first', 'wrote it')
    await gates.reached('second')
    gates.open('second', 'looked')
    await parent.whenIdle()
    expect(gates.log).toEqual(['first', 'second'])
    expect(h.root.tools.isConcurrencySafe({ name: 'task', arguments: JSON.stringify({ description: 'x', prompt: 'x', agentType: 'writer' }) })).toBe(false)
    await h.expectClean()
  })

  it('a failed child is an error result that says why; an unknown type is refused before anything starts', async () => {
    h = await harness({
      respond: (request, who) => {
        if (who === 'parent') {
          return request.messages.length === 1
            ? { toolCalls: [call('fail'), { name: 'task', arguments: { description: 'x', prompt: 'x', agentType: 'nobody' } }] }
            : 'Noted.'
        }
        return { error: { code: 'BAD_REQUEST', message: 'the provider refused it' }, usage: { inputTokens: 7, outputTokens: 0 } }
      },
    })
    const parent = await h.agent()
    parent.followup('Try.')
    await parent.whenIdle()
    expect(toolResults(parent.session)).toEqual([
      'SUBAGENT_FAILED: Error: the explore subagent failed: the provider refused it',
      'INVALID_ARGUMENTS: Error: invalid arguments for task: agentType: Invalid option: expected one of "explore"|"writer"',
    ])
    expect(records(parent.session, 'subagent/')).toEqual([
      { type: 'subagent/started', runId: '#1', sessionId: 'p-sub-*', agentType: 'explore', description: 'do fail', background: false, callId: 'call_0_0' },
      {
        type: 'subagent/finished',
        runId: '#1',
        status: 'failed',
        usage: { inputTokens: 7, outputTokens: 0 },
        modelCalls: 1,
        error: { code: 'BAD_REQUEST', message: 'the provider refused it' },
      },
    ])
    await h.expectClean()
  })
})
