import { describe, expect, it } from 'vitest'
import { MessageId, type ContentBlock } from '@deepseek-ai/dsh-llm'
import { admitInput, resolveAgentInput, type ResolvedAgentInput } from '@deepseek-ai/dsh-agent'

const id = MessageId('msg_1')

function resolved(overrides: Partial<ResolvedAgentInput> = {}): ResolvedAgentInput {
  return { ...resolveAgentInput('hello', 'next-turn', true), ...overrides }
}

describe('resolveAgentInput', () => {
  it('fills every default for a string', () => {
    expect(resolveAgentInput('hi', 'next-step', true)).toEqual({
      content: [{ type: 'text', text: 'hi' }],
      source: { kind: 'user' },
      contexts: [],
      placement: 'separate',
      metadata: {},
      target: 'next-step',
      wakeup: true,
    })
  })

  it('keeps what an object input gives and defaults the rest', () => {
    const input = {
      content: 'read this',
      contexts: [{ label: 'file a.ts', content: [{ type: 'text' as const, text: 'const a = 1' }] }],
      placement: 'prompt-prefix' as const,
    }
    expect(resolveAgentInput(input, 'next-turn', false)).toEqual({
      content: [{ type: 'text', text: 'read this' }],
      source: { kind: 'user' },
      contexts: input.contexts,
      placement: 'prompt-prefix',
      metadata: {},
      target: 'next-turn',
      wakeup: false,
    })
  })
})

describe('admitInput', () => {
  it('returns a deep-frozen record detached from the caller objects', () => {
    const content: ContentBlock[] = [{ type: 'text', text: 'hello' }]
    const metadata = { tags: ['a'] }
    const record = admitInput(resolved({ content, metadata }), id)
    ;(content[0] as { text: string }).text = 'mutated'
    metadata.tags.push('b')
    expect(record).toEqual({
      id,
      content: [{ type: 'text', text: 'hello' }],
      source: { kind: 'user' },
      contexts: [],
      placement: 'separate',
      metadata: { tags: ['a'] },
      target: 'next-turn',
      wakeup: true,
    })
    expect(Object.isFrozen(record)).toBe(true)
    expect(Object.isFrozen(record.content[0])).toBe(true)
    expect(Object.isFrozen(record.metadata.tags)).toBe(true)
  })

  const refused: Array<[string, Partial<ResolvedAgentInput> | unknown, RegExp]> = [
    ['empty content', { content: [] }, /content is empty/],
    ['blank text', { content: [{ type: 'text', text: '  ' }] }, /content is empty/],
    ['a malformed block', { content: [{ type: 'text', text: 1 }] }, /content\[0\]\.text must be a string/],
    ['a block without type', { content: [{ text: 'x' }] }, /content\[0\]\.type/],
    ['a bad source', { source: { kind: 'plugin' } }, /source\.plugin must be a non-empty string/],
    ['a missing source', { source: undefined }, /source must be an object/],
    ['bad contexts', { contexts: [{ label: 1, content: [] }] }, /contexts\[0\]\.label must be a string/],
    ['an empty context', { contexts: [{ label: 'x', content: [] }] }, /contexts\[0\]\.content is empty/],
    ['an unknown placement', { placement: 'suffix' }, /placement/],
    ['an unknown target', { target: 'later' }, /target/],
    ['a non-boolean wakeup', { wakeup: 'yes' }, /wakeup/],
    ['non-JSON metadata', { metadata: { when: new Date() } }, /metadata\.when must be plain JSON/],
    ['a non-finite number', { metadata: { n: Number.NaN } }, /metadata\.n must be a finite number/],
    ['a function in metadata', { metadata: { f: () => 1 } }, /metadata\.f must be JSON/],
    [
      'contexts on an inject',
      { target: 'next-step', wakeup: false, contexts: [{ label: 'x', content: [{ type: 'text', text: 'y' }] }] },
      /inject\(\) .* takes no contexts/,
    ],
  ]
  for (const [what, overrides, message] of refused) {
    it(`refuses ${what} with INVALID_INPUT`, () => {
      expect(() => admitInput(resolved(overrides as Partial<ResolvedAgentInput>), id)).toThrow(
        expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringMatching(message) }),
      )
    })
  }

  it('refuses a cycle in metadata', () => {
    const metadata: Record<string, unknown> = {}
    metadata.self = metadata
    expect(() => admitInput(resolved({ metadata: metadata as never }), id)).toThrow(/cycle/)
  })

  it('names the path of a problem deep inside metadata, and refuses undefined in an array', () => {
    expect(() => admitInput(resolved({ metadata: { a: [{ b: [1, Number.POSITIVE_INFINITY] }] } as never }), id)).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', message: 'metadata.a[0].b[1] must be a finite number' }),
    )
    expect(() => admitInput(resolved({ metadata: { list: [1, undefined] } as never }), id)).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', message: 'metadata.list[1] is undefined' }),
    )
  })

  it('accepts a sub-object shared by two keys (not a cycle) and very deep nesting, deep-frozen', () => {
    const shared = { n: 1 }
    let deep: Record<string, unknown> = { leaf: true }
    for (let i = 0; i < 100; i++) deep = { next: deep }
    const record = admitInput(resolved({ metadata: { a: shared, b: shared, deep } as never }), id)
    expect(record.metadata).toEqual({ a: { n: 1 }, b: { n: 1 }, deep })
    let at = record.metadata.deep as Record<string, unknown>
    while (at.next) {
      expect(Object.isFrozen(at)).toBe(true)
      at = at.next as Record<string, unknown>
    }
    expect(Object.isFrozen(at)).toBe(true)
    expect(Object.isFrozen(record.metadata.a)).toBe(true)
  })

  it('accepts a plugin-merged block type as long as it has a type', () => {
    const record = admitInput(resolved({ content: [{ type: 'citation', url: 'x' } as unknown as ContentBlock] }), id)
    expect(record.content).toEqual([{ type: 'citation', url: 'x' }])
  })
  it('admits strings resolved in any order the same way, and refuses a blank one whenever it was resolved', () => {
    const first = resolveAgentInput('first', 'next-turn', true)
    const blank = resolveAgentInput('   ', 'next-turn', true)
    const last = resolveAgentInput('last', 'next-turn', true)
    // `last` is the one resolved most recently; `first` and `blank` go through the full check.
    expect(admitInput(last, id).content).toEqual([{ type: 'text', text: 'last' }])
    expect(admitInput(first, id).content).toEqual([{ type: 'text', text: 'first' }])
    expect(Object.isFrozen(admitInput(first, id).content)).toBe(true)
    expect(() => admitInput(blank, id)).toThrow(/content is empty/)
    const again = resolveAgentInput(' ', 'next-turn', true)
    expect(() => admitInput(again, id)).toThrow(/content is empty/)
  })
})
