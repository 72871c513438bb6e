import { Context } from 'cordis'
import { describe, expectTypeOf, it } from 'vitest'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import Mcp, { type McpAppliedChange, type McpOptions, type McpServerConfig, type McpServerState, type McpServerStatus, type McpToolsChange } from '@deepseek-ai/dsh-mcp'

declare const ctx: Context
declare const agent: Agent

describe('dsh-mcp public types', () => {
  it('types ctx.mcp and its results', () => {
    expectTypeOf(ctx.mcp).toEqualTypeOf<Mcp>()
    expectTypeOf(ctx.mcp.status(agent)).toEqualTypeOf<McpServerStatus[]>()
    expectTypeOf(ctx.mcp.add('x', { command: 'node' })).toEqualTypeOf<() => void>()
    expectTypeOf(ctx.mcp.client('x')).toEqualTypeOf<Client | undefined>()
    expectTypeOf(ctx.mcp.whenReady()).toEqualTypeOf<Promise<McpServerStatus[]>>()
    expectTypeOf<McpServerStatus['state']>().toEqualTypeOf<McpServerState>()
    // A status is a snapshot: read-only.
    expectTypeOf<McpServerStatus>().toHaveProperty('tools').toEqualTypeOf<readonly string[]>()
  })

  it('accepts entries in the mcpServers shape and partial options', () => {
    const servers: Record<string, McpServerConfig> = {
      files: { command: 'npx', args: ['-y', 'server'], env: { TOKEN: '${TOKEN}' } },
      web: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}' }, timeoutMs: 5000 },
    }
    const options: McpOptions = { servers, restart: { maxAttempts: 3 } }
    expectTypeOf(options).toMatchTypeOf<McpOptions>()
    // @ts-expect-error an entry is a command or a url
    const bad: McpServerConfig = { args: [] }
    void bad
  })

  it('types the mcp/* events with one context object', () => {
    ctx.on('mcp/state', ({ server, previous }) => {
      expectTypeOf(server).toEqualTypeOf<McpServerStatus>()
      expectTypeOf(previous).toEqualTypeOf<McpServerState>()
    })
    ctx.on('mcp/tools', (change) => expectTypeOf(change).toEqualTypeOf<McpToolsChange>())
    ctx.on('mcp/applied', (change) => {
      expectTypeOf(change).toEqualTypeOf<McpAppliedChange>()
      expectTypeOf(change.agent).toEqualTypeOf<Agent>()
    })
  })
})
