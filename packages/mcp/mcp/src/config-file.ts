import { readFile } from 'node:fs/promises'
import { McpError } from './errors'
import type { McpServerConfig } from './server-config'

/**
 * The servers of an MCP config file, as other agents write it: a JSON
 * object with `mcpServers` (Claude Desktop, Claude Code's `.mcp.json`,
 * Cursor) or `servers` (VS Code), each mapping names to entries. The entries
 * are returned as they are (`${VAR}` unexpanded): the plugin checks each one
 * and reports a bad entry as a failed server. Throws `CONFIG_FILE` when the
 * file cannot be read, is not JSON, or holds neither key.
 */
export async function readMcpConfigFile(path: string): Promise<Record<string, McpServerConfig>> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new McpError('CONFIG_FILE', `cannot read the MCP config file ${path}${code ? ` (${code})` : ''}`, { cause: error })
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new McpError('CONFIG_FILE', `the MCP config file ${path} is not valid JSON: ${(error as Error).message}`)
  }
  return mcpServersOf(json, path)
}

/** The `mcpServers` (or `servers`) object of a parsed config; `source` names it in errors. */
export function mcpServersOf(json: unknown, source: string): Record<string, McpServerConfig> {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new McpError('CONFIG_FILE', `${source} must hold a JSON object with an "mcpServers" object`)
  }
  const record = json as Record<string, unknown>
  const servers = record.mcpServers ?? record.servers
  if (servers === null || typeof servers !== 'object' || Array.isArray(servers)) {
    throw new McpError('CONFIG_FILE', `${source} has no "mcpServers" object (the shape is { "mcpServers": { "name": { "command": …, "args": […] } } })`)
  }
  return { ...(servers as Record<string, McpServerConfig>) }
}
