import { describe, expect, it } from 'vitest'
import type { AgentEventEmitter, AgentMessage } from '@deepseek-ai/dsh-agent'
import { MessageId } from '@deepseek-ai/dsh-llm'
import { InboxState } from '../src/inbox'
import type { BuiltLogWriter } from '../src/failure'

/**
 * The inbox's announcement FIFO (`agent/inbox/*` in log order) driven
 * directly: a fake log that commits, then lets a test re-enter the inbox the
 * way a synchronous `session/event` listener does, or refuses an append
 * before committing it (as the session does); a fake emitter whose listener
 * may re-enter the inbox too.
 */
function harness() {
  const logged: string[] = []
  const heard: string[] = []
  /** Runs after an event for this message id was committed (a `session/event` listener). */
  const afterCommit = new Map<string, () => void>()
  /** Message ids whose `inbox/enqueue` the log refuses. */
  const refuse = new Set<string>()
  /** Runs while `agent/inbox/*` for this message id is emitted (an inbox listener). */
  const onHeard = new Map<string, () => void>()
  const idOf = (data: Record<string, any>) => String(data.message?.id ?? data.id ?? data.ids?.join(','))
  const write = (type: string, data: Record<string, any>) => {
    const id = idOf(data)
    if (type === 'inbox/enqueue' && refuse.has(id)) throw new Error(`refused ${id}`)
    logged.push(`${type.slice(6)}:${id}`)
    const after = afterCommit.get(`${type}:${id}`)
    afterCommit.delete(`${type}:${id}`)
    after?.()
    return { type, seq: logged.length - 1, time: 0, data } as never
  }
  const log = { append: write, appendBuilt: write } as unknown as BuiltLogWriter
  const events: AgentEventEmitter = {
    filter: undefined as never,
    emit(name: string, arg: unknown) {
      const ids = Array.isArray(arg) ? arg.map((m: AgentMessage) => m.id).join(',') : (arg as AgentMessage).id
      heard.push(`${name.slice(12)}:${ids}`)
      const listener = onHeard.get(`${name.slice(12)}:${ids}`)
      onHeard.delete(`${name.slice(12)}:${ids}`)
      listener?.()
    },
  } as AgentEventEmitter
  const inbox = new InboxState(log, events)
  return { inbox, logged, heard, afterCommit, refuse, onHeard }
}

const message = (id: string, target: AgentMessage['target'] = 'next-turn'): AgentMessage =>
  Object.freeze({
    id: MessageId(id),
    content: [{ type: 'text', text: id }],
    source: { kind: 'user' },
    contexts: [],
    placement: 'separate',
    metadata: {},
    target,
    wakeup: true,
  }) as AgentMessage

describe('inbox announcements (agent/inbox/* in log order)', () => {
  it('a transition nested in a log listener is announced after the one being logged, and one nested in an inbox listener after both', () => {
    const { inbox, logged, heard, afterCommit, onHeard } = harness()
    afterCommit.set('inbox/enqueue:a', () => inbox.enqueue(message('b')))
    onHeard.set('enqueue:a', () => inbox.enqueue(message('c')))
    onHeard.set('enqueue:c', () => void inbox.claimTurn())
    inbox.enqueue(message('a'))
    expect(logged).toEqual(['enqueue:a', 'enqueue:b', 'enqueue:c', 'dequeue:a'])
    expect(heard).toEqual(logged)
    expect(inbox.nextTurn.map((m) => m.id)).toEqual(['b', 'c'])
  })

  it('many transitions in a row, each emptying the queue, are each announced once, in order', () => {
    const { inbox, logged, heard } = harness()
    for (let i = 0; i < 40; i++) {
      inbox.enqueue(message(`m${i}`))
      expect(inbox.claimTurn()?.id).toBe(`m${i}`)
    }
    expect(logged).toHaveLength(80)
    expect(heard).toEqual(logged)
    expect(inbox.nextTurn).toEqual([])
  })

  it('a refused nested transition gives its place up: the others are announced, in order, and the queue keeps working', () => {
    const { inbox, logged, heard, afterCommit, refuse } = harness()
    refuse.add('b')
    afterCommit.set('inbox/enqueue:a', () => {
      inbox.enqueue(message('x', 'next-step'))
      expect(() => inbox.enqueue(message('b'))).toThrow('refused b')
      inbox.enqueue(message('y'))
    })
    inbox.enqueue(message('a'))
    expect(logged).toEqual(['enqueue:a', 'enqueue:x', 'enqueue:y'])
    expect(heard).toEqual(logged)
    expect(inbox.nextTurn.map((m) => m.id)).toEqual(['a', 'y'])
    expect(inbox.nextStep.map((m) => m.id)).toEqual(['x'])
    inbox.enqueue(message('z'))
    expect(inbox.claimTurn()?.id).toBe('a')
    expect(heard.slice(3)).toEqual(['enqueue:z', 'dequeue:a'])
    expect(inbox.projection).toEqual({ nextTurn: [message('y'), message('z')], nextStep: [message('x', 'next-step')] })
  })
})
