import type { Agent } from '@deepseek-ai/dsh-agent'
import Mcp, { readMcpConfigFile, type McpServerConfig, type McpServerStatus } from '@deepseek-ai/dsh-mcp'
import type { Context } from '../cordis'
import { CliError } from './errors'

/**
 * The servers of `--mcp-config <file>` (or `mcpConfig` in the config file):
 * a JSON file in the `mcpServers` shape other agents read. Throws a
 * `CliError` naming the file when it cannot be read or has no
 * `mcpServers`; a malformed entry is not an error here (dsh-mcp reports it
 * as a failed server, and the others still start).
 */
export async function readMcpServers(file: string, code: 'INVALID_ARGS' | 'INVALID_CONFIG'): Promise<Record<string, McpServerConfig>> {
  try {
    return await readMcpConfigFile(file)
  } catch (error) {
    throw new CliError(code, `${code === 'INVALID_ARGS' ? '--mcp-config' : 'field "mcpConfig"'}: ${(error as Error).message}`)
  }
}

/** Mounts dsh-mcp with `servers`; the servers connect in the background (nothing waits here). */
export async function mountMcp(ctx: Context, servers: Record<string, McpServerConfig> | undefined): Promise<void> {
  if (servers !== undefined) await ctx.plugin(Mcp, { servers })
}

/**
 * `/mcp`: one line per server the agent sees (its state, transport, why it
 * is not connected, its tools), then the MCP tools the agent has now.
 */
export function mcpLines(ctx: Context, agent: Agent): string[] {
  const mcp = ctx.get('mcp')
  if (!mcp) return ['no MCP servers (start dsh-demo with --mcp-config <file>, a JSON file with "mcpServers")']
  const servers = mcp.status(agent)
  if (servers.length === 0) return ['no MCP servers are configured']
  const lines = [`MCP servers (${servers.length}):`]
  for (const server of servers) lines.push(`  ${server.name}  ${describeServer(server)}`)
  const tools = mcp.toolNames(agent)
  lines.push(
    tools.length === 0
      ? 'the agent has no MCP tools yet; tools of servers that connect reach it at its next turn'
      : `the agent has ${tools.length} MCP tool${tools.length === 1 ? '' : 's'}; changes reach it at its next turn`,
  )
  return lines
}

function describeServer(server: McpServerStatus): string {
  const parts: string[] = [server.state, server.transport]
  if (server.pid !== undefined) parts.push(`pid ${server.pid}`)
  if (server.state === 'connected') {
    parts.push(`${server.tools.length} tool${server.tools.length === 1 ? '' : 's'}${server.tools.length ? `: ${server.tools.join(', ')}` : ''}`)
    return parts.join(' · ')
  }
  if (server.error !== undefined) parts.push(server.error)
  if (server.state === 'restarting' && server.retryAt !== undefined) parts.push(`next attempt in ${Math.max(0, Math.ceil((server.retryAt - Date.now()) / 1000))} s`)
  if (server.attempts > 0) parts.push(`${server.attempts} failed attempt${server.attempts === 1 ? '' : 's'}`)
  return parts.join(' · ')
}
