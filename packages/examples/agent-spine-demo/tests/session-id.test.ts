import { describe, expect, it } from 'vitest'
import { newSessionId } from '../src/cli/agent-session'

describe('newSessionId (issue 14.6)', () => {
  it('is the local time to the second, then 96 random bits in 20 base-32 characters', () => {
    const at = new Date(2026, 11, 1, 9, 5, 7)
    expect(newSessionId(at, new Uint8Array(12))).toBe('20261201-090507-00000000000000000000')
    expect(newSessionId(at, new Uint8Array(12).fill(255))).toBe('20261201-090507-zzzzzzzzzzzzzzzzzzzg')
    expect(newSessionId(at, Uint8Array.from([0x08, 0x42, 0x10, 0x84, 0x21, 0, 0, 0, 0, 0, 0, 0x01]))).toBe('20261201-090507-1111111100000000000g')
  })

  it('does not collide within one second (the old ids had 16 random bits and did after a few hundred)', () => {
    const at = new Date(2026, 11, 1, 9, 5, 7)
    const ids = new Set<string>()
    for (let i = 0; i < 20_000; i++) ids.add(newSessionId(at))
    expect(ids.size).toBe(20_000)
    for (const id of ids) expect(id).toMatch(/^20261201-090507-[0-9a-hjkmnp-tv-z]{20}$/)
  })

  it('sorts by creation time', () => {
    const ids = [new Date(2026, 0, 2, 0, 0, 0), new Date(2026, 0, 1, 23, 59, 59), new Date(2025, 11, 31, 12, 0, 0)].map((at) => newSessionId(at))
    expect([...ids].sort()).toEqual([ids[2], ids[1], ids[0]])
  })
})
