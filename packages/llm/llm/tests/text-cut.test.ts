import { describe, expect, it } from 'vitest'
import { safeEnd, safeStart } from '@deepseek-ai/dsh-llm'

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

describe('safeEnd and safeStart: cuts that never split a surrogate pair', () => {
  const text = 'a😀b' // a, the two halves of the emoji, b

  it('moves a cut inside a pair to before it (an end) or after it (a start), and leaves other cuts alone', () => {
    expect([0, 1, 2, 3, 4].map((end) => safeEnd(text, end))).toEqual([0, 1, 1, 3, 4])
    expect([0, 1, 2, 3, 4].map((start) => safeStart(text, start))).toEqual([0, 1, 3, 3, 4])
    expect(text.slice(0, safeEnd(text, 2)) + text.slice(safeStart(text, 2))).toBe('ab')
  })

  it('clamps to the text', () => {
    expect([safeEnd(text, -3), safeEnd(text, 9), safeStart(text, -3), safeStart(text, 9)]).toEqual([0, 4, 0, 4])
  })

  it('the pieces are well-formed for every cut of a text of emoji', () => {
    const emoji = '😀😁😂🤣😃'
    for (let cut = 0; cut <= emoji.length; cut++) {
      expect(LONE.test(emoji.slice(0, safeEnd(emoji, cut)))).toBe(false)
      expect(LONE.test(emoji.slice(safeStart(emoji, cut)))).toBe(false)
    }
  })
})
