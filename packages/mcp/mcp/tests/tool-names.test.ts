import { describe, expect, it } from 'vitest'
import { MAX_TOOL_NAME_CHARS, assignToolNames, type ToolKey } from '@deepseek-ai/dsh-mcp'

function names(...pairs: Array<[string, string]>): string[] {
  const keys: ToolKey[] = pairs.map(([server, tool]) => ({ server, tool }))
  const assigned = assignToolNames(keys)
  return keys.map((key) => assigned.get(key)!)
}

describe('tool names are normalized to [A-Za-z0-9_-]{1,64}, with a short hash only where that would collide (R-MCP-1)', () => {
  it('joins server and tool as mcp__<server>__<tool>, replacing what providers refuse', () => {
    expect(names(['everything', 'get-sum'], ['my files', 'read.file'], ['ünï', 'tool/x'])).toEqual([
      'mcp__everything__get-sum',
      'mcp__my_files__read_file',
      'mcp___n___tool_x',
    ])
  })

  it('cuts long names to 64 characters', () => {
    const [name] = names(['server', 'x'.repeat(100)])
    expect(name).toBe(`mcp__server__${'x'.repeat(MAX_TOOL_NAME_CHARS - 13)}`)
    expect(name).toHaveLength(MAX_TOOL_NAME_CHARS)
  })

  it('gives colliding changed names a hash suffix; a name that needed no change keeps it', () => {
    const [kept, changed, other] = names(['s', 'a_b'], ['s', 'a.b'], ['s', 'a b'])
    expect(kept).toBe('mcp__s__a_b')
    expect(changed).toMatch(/^mcp__s__a_b_[0-9a-f]{6}$/)
    expect(other).toMatch(/^mcp__s__a_b_[0-9a-f]{6}$/)
    expect(new Set([kept, changed, other]).size).toBe(3)
  })

  it('separates names that only a __ in a server or tool name makes equal', () => {
    const [first, second] = names(['a__b', 'c'], ['a', 'b__c'])
    expect(first).toMatch(/^mcp__a__b__c_[0-9a-f]{6}$/)
    expect(second).toMatch(/^mcp__a__b__c_[0-9a-f]{6}$/)
    expect(first).not.toBe(second)
  })

  it('separates tools whose long names share their first 64 characters, within 64 characters', () => {
    const long = 'y'.repeat(80)
    const [first, second] = names(['server', `${long}-one`], ['server', `${long}-two`])
    expect(first).not.toBe(second)
    for (const name of [first!, second!]) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
  })

  it('is a function of the set: the same tools in any order get the same names', () => {
    const pairs: Array<[string, string]> = [['s', 'a.b'], ['s', 'a_b'], ['t', 'x'], ['s', 'a b']]
    const forward = names(...pairs)
    const backward = names(...[...pairs].reverse()).reverse()
    expect(backward).toEqual(forward)
  })
})
