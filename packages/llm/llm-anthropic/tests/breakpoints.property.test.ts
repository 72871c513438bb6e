import fc from 'fast-check'
import { CallId, createAssistantMessage, createUserMessage, type ContentBlock, type GenerateOptions, type Message } from '@deepseek-ai/dsh-llm'
import { describe, expect, it } from 'vitest'
import { requestBody, resolveProvider, type WireMessage } from '../src'

const provider = resolveProvider({ name: 'claude', baseUrl: 'http://127.0.0.1:1' })
const source = { kind: 'model', provider: 'claude', model: 'claude-test' } as const

/** One step of a session: the assistant's answer (thinking, text, tool calls), then what the user side sends back. */
const step = fc.record({
  thinking: fc.boolean(),
  text: fc.string({ maxLength: 5 }),
  calls: fc.nat(12),
  userText: fc.string({ maxLength: 5 }),
})

function history(first: string, steps: ReadonlyArray<typeof step extends fc.Arbitrary<infer T> ? T : never>, n: number): Message[] {
  // A blank prompt is left out of the request (the API refuses blank text), which would leave the first request empty.
  const messages: Message[] = [createUserMessage(/\S/.test(first) ? first : 'start')]
  steps.slice(0, n).forEach((s, i) => {
    const content: ContentBlock[] = []
    if (s.thinking) content.push({ type: 'reasoning', text: 'think', signature: `sig-${i}` })
    if (/\S/.test(s.text)) content.push({ type: 'text', text: s.text })
    for (let c = 0; c < s.calls; c++) content.push({ type: 'tool-call', id: CallId(`toolu_${i}_${c}`), name: 'read', arguments: '{}' })
    if (content.length === 0) content.push({ type: 'text', text: 'ok' })
    messages.push(createAssistantMessage(content, { source }))
    const back: ContentBlock[] = []
    for (let c = 0; c < s.calls; c++) back.push({ type: 'tool-result', toolCallId: CallId(`toolu_${i}_${c}`), content: [{ type: 'text', text: 'r' }] })
    // Blank user text is left out of the request (as empty text always was), so a step's user turn is never blank here.
    const userText = /\S/.test(s.userText) ? s.userText : ''
    if (userText || back.length === 0) back.push({ type: 'text', text: userText || 'next' })
    messages.push(createUserMessage(back))
  })
  return messages
}

const bodyOf = (messages: Message[]) => {
  const options: GenerateOptions = {
    provider: 'claude',
    model: 'claude-test',
    system: 'sys',
    tools: [{ name: 'read', description: 'Reads.', parameters: { type: 'object' } }],
    messages,
  }
  return requestBody(options, 'claude-test', undefined, provider) as unknown as { messages: WireMessage[] }
}

/** The wire prefix up to and including the marked block at `at` (message index, block index), markers removed. */
function prefixAt(messages: WireMessage[], at: [number, number]): string {
  const cut = messages.slice(0, at[0] + 1).map((m, i) => ({ role: m.role, content: i === at[0] ? m.content.slice(0, at[1] + 1) : m.content }))
  return JSON.stringify(cut, (key, value) => (key === 'cache_control' ? undefined : value))
}

function marks(messages: WireMessage[]): Array<[number, number]> {
  const out: Array<[number, number]> = []
  messages.forEach((m, i) => m.content.forEach((block, j) => 'cache_control' in block && block.cache_control && out.push([i, j])))
  return out
}

describe('cache breakpoints, over any tool turn', () => {
  it('property: at most four markers, never on thinking, the last block of the request is written, and the previous request\'s written prefix is read', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 5 }), fc.array(step, { minLength: 1, maxLength: 6 }), (first, steps) => {
        for (let n = 1; n <= steps.length; n++) {
          const before = bodyOf(history(first, steps, n - 1))
          const now = bodyOf(history(first, steps, n))
          const raw = JSON.stringify(now)
          expect(raw.split('"cache_control"').length - 1).toBeLessThanOrEqual(4)
          for (const [i, j] of marks(now.messages)) expect(['thinking', 'redacted_thinking']).not.toContain(now.messages[i]!.content[j]!.type)
          // What the previous request wrote (its last marker) is marked again here, over the same bytes.
          const written = marks(before.messages).at(-1)!
          const read = marks(now.messages).find(([i, j]) => prefixAt(now.messages, [i, j]) === prefixAt(before.messages, written))
          expect(read, `step ${n}: the previous request's prefix is read`).toBeDefined()
          const last = now.messages.at(-1)!
          expect(marks(now.messages).at(-1)).toEqual([now.messages.length - 1, last.content.length - 1])
        }
      }),
      { numRuns: 150 },
    )
  })
})
