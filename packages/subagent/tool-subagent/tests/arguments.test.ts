import { afterEach, describe, expect, it } from 'vitest'
import type { ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import { harness, toolResults, type Harness } from './helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

describe('malformed task arguments (R-SUB-3)', () => {
  it('a blank prompt or description is an INVALID_ARGUMENTS result that names the field; nothing starts and the turn goes on', async () => {
    h = await harness({
      respond: (request, who): string | ScriptReply => {
        if (who !== 'parent') return 'unreachable'
        return request.messages.length === 1
          ? {
              toolCalls: [
                { name: 'task', arguments: { description: 'look around', prompt: ' \n\t ' } },
                { name: 'task', arguments: { description: '   ', prompt: 'Look around.', background: true } },
              ],
            }
          : 'I will write a real prompt.'
      },
    })
    const parent = await h.agent()
    parent.followup('Try.')
    await parent.whenIdle()
    expect(toolResults(parent.session)).toEqual([
      'INVALID_ARGUMENTS: Error: invalid arguments for task: prompt: must not be blank',
      'INVALID_ARGUMENTS: Error: invalid arguments for task: description: must not be blank',
    ])
    expect(parent.session.events.filter((event) => event.type.startsWith('subagent/') || event.type.startsWith('task/'))).toEqual([])
    expect(h.requestsOf(parent).length).toBe(2)
    await h.expectClean()
  })
})
