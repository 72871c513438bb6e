import { describe, expect, it } from 'vitest'
import { createUserMessage, HISTORY, historyOf, type Message } from '@deepseek-ai/dsh-llm'

describe('historyOf', () => {
  it('answers the object a snapshot links under HISTORY, and nothing for any other array', () => {
    const history = {}
    const snapshot = Object.defineProperty([createUserMessage('hi')], HISTORY, { value: history }) as readonly Message[]
    const odd = Object.defineProperty([], HISTORY, { value: 'not an object' }) as readonly Message[]
    expect([historyOf(snapshot), historyOf([]), historyOf(odd)]).toEqual([history, undefined, undefined])
    expect(historyOf(snapshot)).toBe(history)
  })

  it('uses a registered symbol, so that two copies of dsh-llm in one process agree on it', () => {
    expect(HISTORY).toBe(Symbol.for('@deepseek-ai/dsh-llm/history'))
  })
})
