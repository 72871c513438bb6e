import { describe, expect, it } from 'vitest'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { SessionId } from '@deepseek-ai/dsh-session'
import type { McpServerConfig, McpStateChange } from '@deepseek-ai/dsh-mcp'
import { connected, everything, execute, filesystem, mcpSpine, resultText, tempDir, type McpSpine } from './helpers'

/** Creates an agent whose setup adds `servers` through its scoped context. */
async function agentWith(kit: McpSpine, id: string, servers: Record<string, McpServerConfig>): Promise<Agent> {
  const handle = await kit.root.agents.create({
    sessionId: SessionId(id),
    agentOptions: { provider: 'scripted', model: 'test-model' },
    setup: (ctx) => {
      for (const [name, config] of Object.entries(servers)) ctx.get('mcp')!.add(name, config)
    },
  })
  kit.handles.push(handle)
  return handle.agent
}

describe('servers scoped to one agent as well as global ones (R-MCP-3)', () => {
  // Two real server processes start here: the first turns wait for them (startupTimeoutMs raised
  // from the 10 s default so a loaded machine cannot let a turn go without its servers), and the
  // test gets a ceiling to match.
  it('two agents with different server sets see only their own servers and tools', { timeout: 120_000 }, async () => {
    const kit = await mcpSpine({ startupTimeoutMs: 100_000 }, { model: { script: ['a answers', 'b answers'] } })
    const root = tempDir()
    const a = await agentWith(kit, 'a', { files: filesystem(root) })
    const b = await agentWith(kit, 'b', { everything: everything() })
    // Each agent's first turn waits for its own servers.
    a.followup('hi')
    b.followup('hi')
    await Promise.all([a.whenIdle(), b.whenIdle()])

    const names = (agent: Agent) => kit.root.tools.schemas(agent).map((schema) => schema.name)
    expect(names(a).every((name) => name.startsWith('mcp__files__'))).toBe(true)
    expect(names(b).every((name) => name.startsWith('mcp__everything__'))).toBe(true)
    expect([names(a).length > 0, names(b).length > 0]).toEqual([true, true])
    expect(kit.root.tools.schemas().filter((schema) => schema.name.startsWith('mcp__'))).toEqual([])
    expect(kit.mcp.status(a).map((status) => [status.name, status.agentId, status.state])).toEqual([['files', 'a', 'connected']])
    expect(b.ctx.get('mcp')!.status().map((status) => [status.name, status.agentId, status.state])).toEqual([['everything', 'b', 'connected']])
    // Agent b cannot call a's tools.
    expect((await execute(kit, b, 'mcp__files__list_allowed_directories', {})).error?.code).toBe('UNKNOWN_TOOL')
    expect(resultText(await execute(kit, a, 'mcp__files__list_allowed_directories', {}))).toBe(`Allowed directories:\n${root}`)
  })

  // Two real server processes start and are waited for: a ceiling for a loaded machine.
  it("an agent's own server shadows a global one of the same name, and stops when the agent is disposed", { timeout: 120_000 }, async () => {
    const root = tempDir()
    const kit = await mcpSpine({ servers: { tools: everything() } })
    await connected(kit, 'tools')
    const closed: McpStateChange[] = []
    kit.root.on('mcp/state', (change) => void (change.server.state === 'closed' && closed.push(change)))
    const own = await agentWith(kit, 'own', { tools: filesystem(root) })
    const plain = await kit.agent('plain')
    await connected(kit, 'tools', own)
    own.followup('hi')
    kit.model.enqueue('ok')
    await own.whenIdle()

    expect(kit.root.tools.schemas(own).some((schema) => schema.name === 'mcp__tools__read_text_file')).toBe(true)
    expect(kit.root.tools.schemas(own).some((schema) => schema.name === 'mcp__tools__echo')).toBe(false)
    expect(kit.root.tools.schemas(plain).some((schema) => schema.name === 'mcp__tools__echo')).toBe(true)
    expect(kit.mcp.status().map((status) => [status.name, status.agentId ?? 'global'])).toEqual([
      ['tools', 'global'],
      ['tools', 'own'],
    ])

    await kit.handles.find((handle) => handle.agent === own)!.dispose()
    expect(closed.map((change) => [change.server.name, change.server.agentId])).toEqual([['tools', 'own']])
    expect(kit.mcp.status().map((status) => [status.name, status.agentId ?? 'global'])).toEqual([['tools', 'global']])
  })

  it('add() refuses a malformed entry and a second server of the same name in a scope', async () => {
    const kit = await mcpSpine({ servers: { everything: everything({ disabled: true }) } })
    expect(() => kit.mcp.add('bad', { url: 'ftp://example.invalid' })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: 'MCP server "bad": url must be http:// or https://' }),
    )
    expect(() => kit.mcp.add('bad', { command: 'x', url: 'http://127.0.0.1:1' } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: 'MCP server "bad": give either command (stdio) or url (http), not both' }),
    )
    expect(() => kit.mcp.add('everything', everything())).toThrow(expect.objectContaining({ code: 'DUPLICATE_SERVER' }))
    expect(() => kit.mcp.restart('nope')).toThrow(expect.objectContaining({ code: 'UNKNOWN_SERVER' }))
    expect(kit.mcp.status()).toEqual([{ name: 'everything', transport: 'stdio', state: 'disabled', tools: [], attempts: 0 }])
  })
})
