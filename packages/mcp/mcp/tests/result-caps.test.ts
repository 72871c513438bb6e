import { describe, expect, it } from 'vitest'
import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import { Redactor, toToolOutput } from '@deepseek-ai/dsh-mcp'
import { connected, everything, execute, mcpSpine, resultText } from './helpers'

const LIMITS = { maxOutputChars: 60_000, maxImageBytes: 5 * 1024 * 1024 }
const none = new Redactor([])

function textChars(blocks: readonly ContentBlock[]): number {
  let total = 0
  for (const block of blocks) if (block.type === 'text') total += block.text.length
  return total
}

/** Every piece of `secret` long enough to count as one (6 characters or more). */
function fragments(secret: string): string[] {
  const out: string[] = []
  for (let i = 0; i + 6 <= secret.length; i++) out.push(secret.slice(i, i + 6))
  return out
}

describe('the text cap holds for the whole result (R-MCP-1 "outputs are capped")', () => {
  it('a result of many text blocks (one per search hit, per row) stays within maxOutputChars in all', () => {
    const content = Array.from({ length: 2_000 }, (_, i) => ({ type: 'text' as const, text: `hit ${i}: ${'x'.repeat(100)}` }))
    const out = toToolOutput({ content }, LIMITS, none)
    expect(textChars(out)).toBeLessThanOrEqual(LIMITS.maxOutputChars)
    // The model still reads where the result starts and ends, and that something was cut.
    const text = out.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n')
    expect(text.startsWith('hit 0: ')).toBe(true)
    expect(text.endsWith(`hit 1999: ${'x'.repeat(100)}`)).toBe(true)
    expect(text).toMatch(/\[… \d+ characters cut from the middle of this result …\]/)
  })

  it('a hundred thousand tiny blocks do not become a hundred thousand notes', () => {
    const content = Array.from({ length: 100_000 }, () => ({ type: 'text' as const, text: 'row' }))
    const out = toToolOutput({ content }, { ...LIMITS, maxOutputChars: 1_000 }, none)
    expect(textChars(out)).toBeLessThanOrEqual(1_000)
  })

  it('one long block: head, note and tail add up to at most the cap', () => {
    const out = toToolOutput({ content: [{ type: 'text', text: 'a'.repeat(500) + 'z'.repeat(500) }] }, { ...LIMITS, maxOutputChars: 200 }, none)
    expect(textChars(out)).toBeLessThanOrEqual(200)
    expect(out).toEqual([{ type: 'text', text: expect.stringMatching(/^a+\n\[… \d+ characters cut from the middle of this result …\]\nz+$/) }])
  })
})

describe('a cut never leaves a piece of a secret', () => {
  const SECRET = 'dsh-secret-7f3a9c2e51'

  it('toToolOutput redacts before it cuts: the cut falls in [redacted], not in the secret', () => {
    // The secret straddles both cut points (the head's end and the tail's start) whatever they are.
    const out = toToolOutput({ content: [{ type: 'text', text: `${SECRET} `.repeat(40) }] }, { ...LIMITS, maxOutputChars: 300 }, new Redactor([SECRET]))
    const text = (out[0] as { text: string }).text
    for (const piece of fragments(SECRET)) expect(text).not.toContain(piece)
  })

  it('a real server that echoes its env value in a long result', async () => {
    const kit = await mcpSpine({ environment: { DSH_TEST_KEY: SECRET }, servers: { everything: everything({ env: { API_KEY: '${DSH_TEST_KEY}' } }) }, maxOutputChars: 200 })
    await connected(kit, 'everything')
    const agent = await kit.agent()
    const result = await execute(kit, agent, 'mcp__everything__echo', { message: `${SECRET} `.repeat(40) })
    expect(result.error).toBeUndefined()
    const text = resultText(result)
    expect(text).toContain('[redacted]')
    for (const piece of fragments(SECRET)) expect(text).not.toContain(piece)
  })
})
