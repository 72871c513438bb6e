import { describe, expect, it, vi } from 'vitest'
import { newCallId, newMessageId } from '@deepseek-ai/dsh-llm'

const ID = /^(msg|call)_([0-9a-f]{24})-([0-9a-z]+)$/

function parts(id: string): { kind: string; prefix: string; count: number } {
  const match = ID.exec(id)
  if (!match) throw new Error(`not an id of the documented form: ${id}`)
  return { kind: match[1]!, prefix: match[2]!, count: parseInt(match[3]!, 36) }
}

describe('message and call ids', () => {
  it('are msg_/call_, a per-process random prefix of 24 hex digits, and a counter: never the same twice', () => {
    const ids = [newMessageId(), newCallId(), ...Array.from({ length: 2000 }, (_, i) => (i % 2 ? newCallId() : newMessageId()))]
    expect(new Set(ids).size).toBe(ids.length)
    const parsed = ids.map(parts)
    expect(parsed.slice(0, 2).map((part) => part.kind)).toEqual(['msg', 'call'])
    expect(new Set(parsed.map((part) => part.prefix)).size).toBe(1)
    // One counter for both kinds, in issue order.
    for (let i = 1; i < parsed.length; i++) expect(parsed[i]!.count).toBe(parsed[i - 1]!.count + 1)
  })

  it('draw a new random prefix each time the module is loaded (each process or worker), so two processes do not collide', async () => {
    const prefixes = new Set([parts(newMessageId()).prefix])
    for (let i = 0; i < 3; i++) {
      vi.resetModules()
      const fresh = await import('../src/ids')
      const id = fresh.newMessageId()
      expect(parts(id).count).toBe(0)
      prefixes.add(parts(id).prefix)
    }
    expect(prefixes.size).toBe(4)
  })
})
