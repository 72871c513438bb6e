import { trace } from '@deepseek-ai/dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { Gates, harness, look, note, records, taskCall, toolResults, waitTool, type Harness } from './helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

const started =
  'Started background task task-1 (explore subagent: "dig"). Its answer will come to you as a message when it finishes; carry on with other work meanwhile, and do not wait or poll for it. task_output shows its progress; task_kill stops it.'
const notice = '[Background task task-1 completed] subagent: explore "dig"\nGold under the tree.\n\n[explore subagent: 1 model call, 30 input tokens, 5 output tokens]'
const gold = { text: 'Gold under the tree.', usage: { inputTokens: 30, outputTokens: 5 } }

/** Whether the last message of a request is a tool result. */
const afterTool = (request: { messages: readonly { role: string; content: readonly { type: string }[] }[] }) =>
  request.messages.at(-1)!.content.some((block) => block.type === 'tool-result')

describe('a background task: a task id now, the answer later through ctx.tasks (R-SUB-3, R-TSK-2)', () => {
  it('finishing while the parent is idle: the answer starts a steering turn, which answers it', async () => {
    const gates = new Gates()
    h = await harness({
      respond: (request, who) => {
        if (who !== 'parent') return gates.hold(who)
        if (request.messages.length === 1) return taskCall({ description: 'dig', prompt: 'Dig.', background: true })
        return afterTool(request) ? 'Started it.' : 'The digging found gold.'
      },
    })
    const parent = await h.agent()
    parent.followup('Dig in the background.')
    await parent.whenIdle()
    await gates.reached('Dig.')
    expect(parent.status).toBe('idle')
    gates.open('Dig.', gold)
    await h.root.tasks.get('task-1')!.result()
    await parent.whenIdle()
    expect(trace(parent.session).filter((line) => !line.startsWith('assistant/chunk') && !line.startsWith('request/header'))).toEqual([
      'inbox/enqueue next-turn "Dig in the background."',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "Dig in the background."',
      'assistant/message "[tool-call]" tool-calls',
      'tool/call task',
      'task/started',
      'subagent/started',
      `tool/result ok ${JSON.stringify(started)}`,
      'step/end 1.1',
      'step/start 1.2',
      'assistant/message "Started it." stop',
      'step/end 1.2',
      'turn/end 1 completed',
      'subagent/finished',
      `inbox/enqueue next-step ${JSON.stringify(notice)}`,
      'task/delivered',
      'turn/start 2 steering',
      'step/start 2.1',
      'inbox/dequeue',
      `steering/message ${JSON.stringify(notice)}`,
      'assistant/message "The digging found gold." stop',
      'step/end 2.1',
      'turn/end 2 completed',
    ])
    expect(records(parent.session, 'task/')).toEqual([
      { type: 'task/started', id: 'task-1', kind: 'subagent', title: 'explore "dig"', callId: 'call_0_0' },
      { type: 'task/delivered', id: 'task-1', status: 'completed', via: 'steer', messageId: 'm' },
    ])
    await h.expectClean()
  })

  it('finishing while the parent works: the answer is read at the next step boundary of the same turn', async () => {
    const gates = new Gates()
    h = await harness({
      tools: [look, note, waitTool(gates)],
      respond: (request, who) => {
        if (who !== 'parent') return gates.hold(who)
        if (request.messages.length === 1) return { toolCalls: [taskCall({ description: 'dig', prompt: 'Dig.', background: true }).toolCalls![0]!, { name: 'wait', arguments: { key: 'w' } }] }
        return 'Both are done: gold.'
      },
    })
    const parent = await h.agent()
    parent.followup('Dig, and wait.')
    await gates.reached('w')
    await gates.reached('Dig.')
    gates.open('Dig.', gold)
    await h.root.tasks.get('task-1')!.result()
    gates.open('w', 'waited')
    await parent.whenIdle()
    expect(trace(parent.session).filter((line) => !line.startsWith('assistant/chunk') && !line.startsWith('request/header'))).toEqual([
      'inbox/enqueue next-turn "Dig, and wait."',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "Dig, and wait."',
      'assistant/message "[tool-call][tool-call]" tool-calls',
      'tool/call task',
      'task/started',
      'subagent/started',
      `tool/result ok ${JSON.stringify(started)}`,
      'tool/call wait',
      'subagent/finished',
      `inbox/enqueue next-step ${JSON.stringify(notice)}`,
      'task/delivered',
      'tool/result ok "waited"',
      'inbox/dequeue',
      `steering/message ${JSON.stringify(notice)}`,
      'step/end 1.1',
      'step/start 1.2',
      'assistant/message "Both are done: gold." stop',
      'step/end 1.2',
      'turn/end 1 completed',
    ])
    // The second request saw the answer after the results of the step that was running.
    expect(h.model.requests.filter((request) => request.sessionId === parent.id)[1]!.messages.at(-1)!.content).toEqual([{ type: 'text', text: notice }])
    await h.expectClean()
  })

  it('the model lists, reads and stops its own tasks; a stopped task is reported by task_kill alone', async () => {
    const gates = new Gates()
    let step = 0
    h = await harness({
      respond: (request, who) => {
        if (who !== 'parent') {
          return request.messages.length === 1 ? { text: 'Found a coin so far.', toolCalls: [{ name: 'look', arguments: { at: 'hole' } }] } : gates.hold('dig on', request)
        }
        const calls = [
          taskCall({ description: 'dig', prompt: 'Dig.', background: true }),
          { toolCalls: [{ name: 'task_list', arguments: {} }] },
          { toolCalls: [{ name: 'task_output', arguments: { taskId: 'task-1' } }] },
          { toolCalls: [{ name: 'task_kill', arguments: { taskId: 'task-1' } }] },
          { toolCalls: [{ name: 'task_output', arguments: { taskId: 'task-9' } }] },
          'Stopped the digging.',
        ]
        // task_output is asked once the child has written its first text and holds in its next call.
        return step === 2 ? gates.reached('dig on').then(() => calls[step++]!) : calls[step++]!
      },
    })
    const parent = await h.agent()
    parent.followup('Dig, check, stop.')
    await parent.whenIdle()
    expect(gates.log).toEqual(['dig on'])
    expect(toolResults(parent.session)).toEqual([
      `ok: ${started}`,
      'ok: task-1 [running] subagent: explore "dig"',
      'ok: task-1 [running] subagent: explore "dig"\nOutput so far:\nFound a coin so far.',
      'ok: [Background task task-1 was stopped by you] subagent: explore "dig"\nOutput so far:\nFound a coin so far.',
      'TASK_NOT_FOUND: Error: you have no task "task-9"; task_list shows your background tasks',
    ])
    expect(records(parent.session, 'task/')).toEqual([
      { type: 'task/started', id: 'task-1', kind: 'subagent', title: 'explore "dig"', callId: 'call_0_0' },
      { type: 'task/delivered', id: 'task-1', status: 'cancelled', via: 'result' },
    ])
    expect(parent.session.events.filter((event) => event.type === 'steering/message')).toEqual([])
    expect(records(parent.session, 'subagent/').at(-1)).toMatchObject({ type: 'subagent/finished', status: 'cancelled' })
    await h.expectClean()
  })
})
