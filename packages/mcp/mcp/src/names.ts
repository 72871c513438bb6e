import { createHash } from 'node:crypto'

/** The longest tool name every provider dsh targets accepts. */
export const MAX_TOOL_NAME_CHARS = 64

/** One tool of one server, by the names the server and the config gave. */
export interface ToolKey {
  readonly server: string
  readonly tool: string
}

const UNSAFE = /[^A-Za-z0-9_-]/g

/** The name as the model would see it before collisions are resolved, and whether it differs from the plain join. */
function candidate(key: ToolKey): { name: string; altered: boolean; base: string } {
  const base = `mcp__${key.server.replace(UNSAFE, '_')}__${key.tool.replace(UNSAFE, '_')}`
  const name = base.length > MAX_TOOL_NAME_CHARS ? base.slice(0, MAX_TOOL_NAME_CHARS) : base
  return { name, altered: name !== `mcp__${key.server}__${key.tool}`, base }
}

function hashed(base: string, key: ToolKey, digits: number): string {
  const hash = createHash('sha256').update(`${key.server}\0${key.tool}`).digest('hex').slice(0, digits)
  return `${base.slice(0, MAX_TOOL_NAME_CHARS - digits - 1)}_${hash}`
}

/**
 * The dsh tool names of a set of MCP tools (R-MCP-1): `mcp__<server>__<tool>`
 * with every character outside `[A-Za-z0-9_-]` replaced by `_` and cut to 64
 * characters. Where two tools would get the same name, each one whose name
 * was changed by that (or that is ambiguous, like server `a__b` tool `c`
 * against server `a` tool `b__c`) gets `_` and six hex digits of a SHA-256 of
 * its server and tool names instead of its last seven characters; a name the
 * server gave that needed no change keeps it. The result is a pure function
 * of the set, so the same servers give the same names in every process.
 */
export function assignToolNames(keys: readonly ToolKey[]): Map<ToolKey, string> {
  const groups = new Map<string, Array<{ key: ToolKey; altered: boolean; base: string }>>()
  for (const key of keys) {
    const { name, altered, base } = candidate(key)
    const group = groups.get(name)
    if (group) group.push({ key, altered, base })
    else groups.set(name, [{ key, altered, base }])
  }
  const names = new Map<ToolKey, string>()
  for (const [name, group] of groups) {
    if (group.length === 1) {
      names.set(group[0]!.key, name)
      continue
    }
    const keeper = group.filter((member) => !member.altered)
    for (const member of group) {
      names.set(member.key, keeper.length === 1 && keeper[0] === member ? name : hashed(member.base, member.key, 6))
    }
  }
  // A hash that lands on another tool's name (about one in sixteen million): a longer hash for both.
  const seen = new Map<string, ToolKey>()
  for (const [key, name] of names) {
    const other = seen.get(name)
    if (other === undefined) {
      seen.set(name, key)
      continue
    }
    names.set(key, hashed(candidate(key).base, key, 12))
    names.set(other, hashed(candidate(other).base, other, 12))
  }
  return names
}
