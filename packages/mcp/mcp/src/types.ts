import type { SessionId } from '@deepseek-ai/dsh-session'

/**
 * Where a server is in its life:
 * - `disabled`: configured with `disabled: true`, never started;
 * - `connecting`: an attempt is under way (spawn or HTTP, handshake, first listing);
 * - `connected`: handshake done and tools listed; calls go through;
 * - `restarting`: the last attempt failed or the server went away; the next
 *   attempt starts at `retryAt` (backoff);
 * - `failed`: the attempts are used up, or the config is invalid; only
 *   `ctx.mcp.restart(name)` tries again;
 * - `closed`: removed (its scope was disposed or the plugin unloaded).
 */
export type McpServerState = 'disabled' | 'connecting' | 'connected' | 'restarting' | 'failed' | 'closed'

/** What `ctx.mcp.status()` says about one server. Frozen. */
export interface McpServerStatus {
  /** The server's name in the config. */
  readonly name: string
  /** The agent the server belongs to; absent for a global server. */
  readonly agentId?: SessionId
  readonly transport: 'stdio' | 'http'
  readonly state: McpServerState
  /** The server's own tool names, sorted (empty unless `connected`). */
  readonly tools: readonly string[]
  /** Why the server is not connected (the last failure), with its secrets redacted. */
  readonly error?: string
  /** Failed attempts in a row (0 once connected). */
  readonly attempts: number
  /** When `restarting`: the time (`Date.now()` clock) of the next attempt. */
  readonly retryAt?: number
  /** The child's process id, for a running stdio server. */
  readonly pid?: number
  /** The server's name and version from the handshake. */
  readonly serverInfo?: { readonly name: string; readonly version: string }
  /** The end of a stdio server's standard error (at most 2,000 characters), redacted. */
  readonly stderr?: string
}
