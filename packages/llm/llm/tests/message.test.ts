import { describe, expect, it, vi } from 'vitest'
import {
  CallId,
  MessageId,
  assemble,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  frozenTextContent,
  LlmError,
  type ContentBlock,
  type Message,
} from '@deepseek-ai/dsh-llm'

function frozenThroughout(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true
  if (!Object.isFrozen(value)) return false
  return Object.values(value).every(frozenThroughout)
}

/** What a reader of a message relies on: a plain object, keys in order, prototype `Object.prototype`, JSON round trip. */
function plainShape(message: Message) {
  return {
    prototype: Object.getPrototypeOf(message) === Object.prototype,
    keys: Object.keys(message),
    contentIsArray: Array.isArray(message.content),
    blockPrototypes: message.content.map((block) => Object.getPrototypeOf(block) === Object.prototype),
    json: JSON.parse(JSON.stringify(message)) as unknown,
  }
}

describe('message constructors', () => {
  it('make plain, deep-frozen objects with the keys id, role, content, source in that order', () => {
    const source = { kind: 'model' as const, provider: 'p', model: 'm' }
    const messages = [
      createUserMessage('hi', { id: MessageId('u1') }),
      createAssistantMessage([{ type: 'text', text: 'yes' }], { id: MessageId('a1'), source }),
      createToolResultMessage({ callId: CallId('c1'), content: 'done', id: MessageId('t1') }),
    ]
    expect(messages).toStrictEqual([
      { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } },
      { id: 'a1', role: 'assistant', content: [{ type: 'text', text: 'yes' }], source: { kind: 'model', provider: 'p', model: 'm' } },
      {
        id: 't1',
        role: 'user',
        content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'done' }] }],
        source: { kind: 'tool', callId: 'c1' },
      },
    ])
    expect(messages.map(plainShape)).toEqual(
      messages.map((message) => ({
        prototype: true,
        keys: ['id', 'role', 'content', 'source'],
        contentIsArray: true,
        blockPrototypes: [true],
        json: { ...message, content: JSON.parse(JSON.stringify(message.content)) as unknown, source: { ...message.source } },
      })),
    )
    expect(messages.map(frozenThroughout)).toEqual([true, true, true])
    // The caller's source is frozen in place and kept, not copied.
    expect(messages[1]!.source).toBe(source)
  })

  it('give every tool result lists of its own: exactly its one block each, never shared with another message', () => {
    const first = createToolResultMessage({ callId: CallId('c1'), content: 'one' })
    const second = createToolResultMessage({ callId: CallId('c2'), content: 'two' })
    const lists = (message: Message) => {
      const block = message.content[0] as { content: readonly ContentBlock[] }
      return [message.content, block.content]
    }
    const [outer1, inner1] = lists(first)
    const [outer2, inner2] = lists(second)
    expect([outer1 === outer2, inner1 === inner2, outer1 === inner1]).toEqual([false, false, false])
    expect([outer1, inner1, outer2, inner2].map((list) => ({ array: Array.isArray(list), keys: Object.keys(list!), frozen: Object.isFrozen(list) }))).toEqual(
      Array(4).fill({ array: true, keys: ['0'], frozen: true }),
    )
    expect([inner1![0], inner2![0]]).toStrictEqual([
      { type: 'text', text: 'one' },
      { type: 'text', text: 'two' },
    ])
  })

  it('copy the block list they are given (the caller keeps its list), keep and freeze its blocks, and read any iterable', () => {
    const first: ContentBlock = { type: 'text', text: 'a' }
    const blocks: ContentBlock[] = [first]
    const message = createUserMessage(blocks)
    blocks.push({ type: 'text', text: 'b' })
    expect([message.content.length, message.content === blocks, message.content[0] === first, Object.isFrozen(first), Object.isFrozen(blocks)]).toEqual([
      1,
      false,
      true,
      true,
      false,
    ])
    // A list made by `map` and a non-array iterable give the same message content.
    const mapped = [0, 1].map((i): ContentBlock => ({ type: 'text', text: String(i) }))
    const iterable = new Set<ContentBlock>([{ type: 'text', text: '0' }, { type: 'text', text: '1' }])
    const source = { kind: 'model' as const, provider: 'p', model: 'm' }
    expect([createAssistantMessage(mapped, { source }).content, createAssistantMessage(iterable as unknown as readonly ContentBlock[], { source }).content]).toEqual([
      [{ type: 'text', text: '0' }, { type: 'text', text: '1' }],
      [{ type: 'text', text: '0' }, { type: 'text', text: '1' }],
    ])
    // A long list keeps every block, in order.
    const long = Array.from({ length: 3000 }, (_, i): ContentBlock => ({ type: 'text', text: String(i) }))
    const longContent = createUserMessage(long).content
    expect([longContent.length, longContent.every((block, i) => block === long[i]), Object.isFrozen(longContent)]).toEqual([3000, true, true])
    expect(createAssistantMessage([], { source }).content).toEqual([])
    expect(Object.isFrozen(createAssistantMessage([], { source }).content)).toBe(true)
  })

  it('messages made from an assembled answer are plain objects too', () => {
    const { content } = assemble([
      { type: 'text-delta', index: 0, text: 'hel' },
      { type: 'tool-call-delta', index: 1, id: CallId('c1'), name: 'read', argumentsDelta: '{}' },
      { type: 'text-delta', index: 0, text: 'lo' },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ])
    const message = createAssistantMessage(content, { source: { kind: 'model', provider: 'p', model: 'm' } })
    expect(message.content).toStrictEqual([
      { type: 'text', text: 'hello' },
      { type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' },
    ])
    expect(plainShape(message).blockPrototypes).toEqual([true, true])
    expect(message.content.map((block) => Object.keys(block))).toEqual([
      ['type', 'text'],
      ['type', 'id', 'name', 'arguments'],
    ])
  })
})

describe('frozenTextContent and the user message made from it (issue 18: one list per prompt in the log)', () => {
  it('is a frozen list of one frozen plain text block, and the user message made from it takes that very list', () => {
    const list = frozenTextContent('hello')
    const message = createUserMessage(list)
    expect([list, Object.isFrozen(list), Object.isFrozen(list[0]), Object.getPrototypeOf(list[0]) === Object.prototype]).toEqual([
      [{ type: 'text', text: 'hello' }],
      true,
      true,
      true,
    ])
    expect(message.content).toBe(list)
    expect(plainShape(message)).toEqual(plainShape(createUserMessage('hello', { id: message.id })))
  })

  it("copies and freezes a caller's list, mutable or frozen, and any list but the last one built", () => {
    const mutable: ContentBlock[] = [{ type: 'text', text: 'mine' }]
    const fromMutable = createUserMessage(mutable)
    // The caller's list stays the caller's: changing it later changes nothing in the message.
    mutable.push({ type: 'text', text: 'later' })
    mutable.splice(0, 1)
    const frozen = Object.freeze([Object.freeze({ type: 'text' as const, text: 'frozen' })])
    const fromFrozen = createUserMessage(frozen)
    const older = frozenTextContent('older')
    frozenTextContent('newer')
    const fromOlder = createUserMessage(older)
    expect([fromMutable.content === mutable, fromFrozen.content === frozen, fromOlder.content === older]).toEqual([false, false, false])
    expect([fromMutable.content, fromFrozen.content, fromOlder.content]).toEqual([[{ type: 'text', text: 'mine' }], [{ type: 'text', text: 'frozen' }], [{ type: 'text', text: 'older' }]])
    expect([fromMutable, fromFrozen, fromOlder].every(frozenThroughout)).toBe(true)
  })

  it('a content that is not a list is refused, as before, also while no list was built yet (no message without content)', async () => {
    // A fresh module: nothing built by frozenTextContent in it yet.
    vi.resetModules()
    const fresh = await import('../src/message')
    const missing = undefined as unknown as ContentBlock[]
    const source = { kind: 'model', provider: 'p', model: 'm' } as const
    const refused = (make: () => unknown) => {
      try {
        return make()
      } catch (error) {
        return error instanceof TypeError
      }
    }
    expect([refused(() => fresh.createUserMessage(missing)), refused(() => fresh.createAssistantMessage(missing, { source }))]).toEqual([true, true])
  })

  it('refuses a text that is not a string with INVALID_CONFIG', () => {
    let error: unknown
    try {
      frozenTextContent(42 as unknown as string)
    } catch (e) {
      error = e
    }
    expect([error instanceof LlmError, (error as LlmError).code]).toEqual([true, 'INVALID_CONFIG'])
  })
})
