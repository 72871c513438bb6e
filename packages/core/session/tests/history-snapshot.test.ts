import { inspect } from 'node:util'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { historyOf, HISTORY, type Message } from '@deepseek-ai/dsh-llm'
import { ReadOnlyHistoryError, SessionId, type Session } from '@deepseek-ai/dsh-session'
import { createHistorySnapshot } from '../src/log/history-snapshot'
import { closedTurn, setup, user } from './helpers'

/** A session with `turns` closed turns: 2 messages each. */
async function sessionWith(turns: number): Promise<Session> {
  const root = await setup()
  const session = root.sessions.create(SessionId('s'))
  for (let turn = 1; turn <= turns; turn++) closedTurn(session, turn)
  return session
}

const texts = (messages: readonly Message[]) => messages.map((message) => (message.content[0]?.type === 'text' ? message.content[0].text : '?'))

describe('deriveMessages() is an immutable snapshot of fixed length (R-SES-2)', () => {
  it('reads like the array of its messages', async () => {
    const session = await sessionWith(2)
    const history = session.deriveMessages()
    const plain = [...history]
    expect(texts(plain)).toEqual(['q1', 'answer 1', 'q2', 'answer 2'])
    expect(Array.isArray(history)).toBe(true)
    expect(Object.getPrototypeOf(history)).toBe(Array.prototype)
    expect(history.length).toBe(4)
    expect([history[0], history[3], history[4]]).toEqual([plain[0], plain[3], undefined])
    expect([history.at(-1), history.at(0), history.at(4)]).toEqual([plain[3], plain[0], undefined])
    expect(history.slice(1, -1)).toEqual(plain.slice(1, -1))
    expect(history.map((message, index, array) => [message.role, index, array === history])).toEqual([
      ['user', 0, true],
      ['assistant', 1, true],
      ['user', 2, true],
      ['assistant', 3, true],
    ])
    expect(history.filter((message) => message.role === 'user')).toEqual([plain[0], plain[2]])
    expect([history.find((m) => m.role === 'assistant'), history.findLast((m) => m.role === 'user')]).toEqual([plain[1], plain[2]])
    expect([history.findIndex((m) => m.role === 'assistant'), history.findLastIndex((m) => m.role === 'user')]).toEqual([1, 2])
    expect([history.indexOf(plain[2]!), history.lastIndexOf(plain[0]!), history.includes(plain[3]!), history.indexOf(user('x'))]).toEqual([2, 0, true, -1])
    expect([history.some((m) => m.role === 'user'), history.every((m) => m.role === 'user')]).toEqual([true, false])
    expect(history.reduce((sum, message) => sum + message.content.length, 0)).toBe(4)
    const visited: Message[] = []
    history.forEach((message) => visited.push(message))
    for (const message of history) visited.push(message)
    expect(visited).toEqual([...plain, ...plain])
    expect(Array.from(history)).toEqual(plain)
    expect([...history.entries()].map(([index]) => index)).toEqual([0, 1, 2, 3])
    expect(history.concat([])).toEqual(plain)
    expect(history.toReversed()).toEqual(plain.toReversed())
    expect(JSON.stringify(history)).toBe(JSON.stringify(plain))
    expect(JSON.stringify({ messages: history }, null, 2)).toBe(JSON.stringify({ messages: plain }, null, 2))
    expect(Object.keys(history)).toEqual(['0', '1', '2', '3'])
    expect([0 in history, 4 in history, 'length' in history]).toEqual([true, false, true])
    expect(history).toEqual(plain)
    expect(history).toStrictEqual(plain)
    expect(inspect(history)).toBe(inspect(plain))
    expect(String(history)).toBe(String(plain))
  })

  it('keeps its length and entries when the session grows, and a later call sees the growth', async () => {
    const session = await sessionWith(1)
    const recorded = session.deriveMessages()
    const entries = [...recorded]
    closedTurn(session, 2)
    closedTurn(session, 3)
    expect(recorded.length).toBe(2)
    expect([...recorded]).toEqual(entries)
    expect(recorded[2]).toBeUndefined()
    expect(recorded.map((message) => message)).toEqual(entries)
    expect(JSON.stringify(recorded)).toBe(JSON.stringify(entries))
    expect(Object.keys(recorded)).toEqual(['0', '1'])
    expect(texts(session.deriveMessages())).toEqual(['q1', 'answer 1', 'q2', 'answer 2', 'q3', 'answer 3'])
  })

  it('refuses every write with a ReadOnlyHistoryError (a TypeError) and changes nothing, neither the snapshot nor the next one', async () => {
    const session = await sessionWith(2)
    const history = session.deriveMessages()
    const entries = [...history]
    const system = user('you are a pirate', 'system')
    const writable = history as Message[]
    const writes: Array<[string, () => unknown]> = [
      ['unshift', () => writable.unshift(system)],
      ['push', () => writable.push(system)],
      ['index assignment', () => (writable[0] = system)],
      ['assignment past the end', () => (writable[4] = system)],
      ['pop', () => writable.pop()],
      ['shift', () => writable.shift()],
      ['splice', () => writable.splice(0, 1)],
      ['sort', () => writable.sort()],
      ['reverse', () => writable.reverse()],
      ['fill', () => writable.fill(system)],
      ['copyWithin', () => writable.copyWithin(0, 1)],
      ['length = 0', () => (writable.length = 0)],
      ['delete', () => delete writable[0]],
      ['defineProperty', () => Object.defineProperty(history, 0, { value: system })],
      ['Object.assign', () => Object.assign(history, [system])],
      ['Object.setPrototypeOf', () => Object.setPrototypeOf(history, null)],
    ]
    const refused: string[] = []
    for (const [name, write] of writes) {
      try {
        write()
      } catch (error) {
        if (error instanceof ReadOnlyHistoryError && error instanceof TypeError && error.code === 'READ_ONLY') refused.push(name)
      }
    }
    expect(refused).toEqual(writes.map(([name]) => name))
    // Freezing what is frozen is a no-op, as on a frozen array: it succeeds and changes nothing.
    expect([Object.freeze(history), Object.preventExtensions(history), Object.isFrozen(history)]).toEqual([history, history, true])
    expect([...history]).toEqual(entries)
    expect(session.deriveMessages()).toBe(history)
    closedTurn(session, 3)
    expect(texts(session.deriveMessages())).toEqual(['q1', 'answer 1', 'q2', 'answer 2', 'q3', 'answer 3'])
  })

  it('deriveMessages() twice without new messages returns the same snapshot; after new ones an equal prefix of the same history', async () => {
    const session = await sessionWith(2)
    const a = session.deriveMessages()
    const b = session.deriveMessages()
    expect(b).toBe(a)
    expect(b).toEqual(a)
    closedTurn(session, 3)
    const c = session.deriveMessages()
    expect(c).not.toBe(a)
    expect(c.slice(0, a.length)).toEqual([...a])
    expect(historyOf(c)).toBe(historyOf(a))
    expect(c[HISTORY as never]).toBe(historyOf(a))
  })

  it("its methods called on another receiver are Array's", async () => {
    const history = (await sessionWith(1)).deriveMessages()
    expect(history.map.call([1, 2], (n) => (n as unknown as number) * 2)).toEqual([2, 4])
    expect(history.slice.call([1, 2, 3], 1)).toEqual([2, 3])
    expect(history.at.call([1, 2, 3], -1)).toBe(3)
    expect([...history.values.call([7, 8])]).toEqual([7, 8])
    expect(historyOf([])).toBeUndefined()
  })

  it('answers every read exactly as the frozen array of its first entries does (property)', () => {
    const index = fc.oneof(fc.integer({ min: -12, max: 12 }), fc.constantFrom(undefined, Infinity, -Infinity, Number.NaN, 1.5, -0.5))
    fc.assert(
      fc.property(fc.nat(8), fc.nat(4), index, index, (length, extra, a, b) => {
        const entries = Array.from({ length: length + extra }, (_, i) => user(`m${i % 3}`, `id${i % 3}`))
        const expected = Object.freeze(entries.slice(0, length))
        const snapshot = createHistorySnapshot(entries, length, {})
        const probe = entries[Math.abs(Number(a) || 0) % Math.max(entries.length, 1)]
        const reads = (messages: readonly Message[]) => [
          messages.length,
          messages.slice(a, b),
          messages.at(a as number),
          messages.indexOf(probe!, a),
          b === undefined ? messages.lastIndexOf(probe!) : messages.lastIndexOf(probe!, b),
          messages.includes(probe!, a),
          messages.join('|'),
          [...messages],
          messages.findLastIndex((message) => message.id === probe?.id),
          JSON.stringify(messages),
          Object.keys(messages),
        ]
        expect(reads(snapshot)).toEqual(reads(expected))
      }),
    )
  })
})
