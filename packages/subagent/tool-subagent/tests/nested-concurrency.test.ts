import { settle } from '@deepseek-ai/dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { explore, Gates, harness, look, note, writer, type Harness } from './helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

const delegator = { name: 'delegator', description: 'Hands work on.', systemPrompt: 'You delegate.', tools: ['task', 'look'] }
const args = (agentType: string) => JSON.stringify({ description: 'x', prompt: 'x', agentType })

describe('concurrency of a type that may start subagents (R-SUB-3)', () => {
  it('a type whose allow-list has task is concurrency-safe only when every type it could start only reads: two delegators that start writers run one after the other', async () => {
    const gates = new Gates()
    h = await harness({
      types: [delegator, writer],
      tools: [look, note],
      respond: (request, who) => {
        if (who === 'parent') {
          return request.messages.length === 1
            ? {
                toolCalls: [
                  { name: 'task', arguments: { description: 'one', prompt: 'Delegate one.', agentType: 'delegator' } },
                  { name: 'task', arguments: { description: 'two', prompt: 'Delegate two.', agentType: 'delegator' } },
                ],
              }
            : 'Done.'
        }
        if (who.startsWith('Delegate ')) {
          const which = who.slice('Delegate '.length, -1)
          return request.messages.length === 1 ? { toolCalls: [{ name: 'task', arguments: { description: 'w', prompt: `Write ${which}.`, agentType: 'writer' } }] } : `Delegated ${which}.`
        }
        return gates.hold(who)
      },
    })
    expect(h.root.tools.isConcurrencySafe({ name: 'task', arguments: args('delegator') })).toBe(false)
    const parent = await h.agent()
    parent.followup('Delegate twice.')
    await gates.reached('Write one.')
    for (let i = 0; i < 20; i++) await settle()
    // The second delegator (and its writer) has not started while the first one's writer works.
    expect(gates.log).toEqual(['Write one.'])
    gates.open('Write one.', 'wrote one')
    await gates.reached('Write two.')
    gates.open('Write two.', 'wrote two')
    await parent.whenIdle()
    expect(gates.log).toEqual(['Write one.', 'Write two.'])
    await h.expectClean()
  })

  it('when every type only reads, a type that may start subagents stays concurrency-safe', async () => {
    h = await harness({ types: [delegator, explore], tools: [look], respond: () => 'ok' })
    expect(h.root.tools.isConcurrencySafe({ name: 'task', arguments: args('delegator') })).toBe(true)
    expect(h.root.tools.isConcurrencySafe({ name: 'task', arguments: args('explore') })).toBe(true)
  })
})
