import type { Agent } from '@deepseek-ai/dsh-agent'
import type { SessionId } from '@deepseek-ai/dsh-session'
import type { McpServerState, McpServerStatus } from './types'

/** What `mcp/state` tells its listeners: a server moved from one state to another. */
export interface McpStateChange {
  /** The server as it is now (its state, the reason it is not connected, its tools…). */
  readonly server: McpServerStatus
  readonly previous: McpServerState
}

/** What `mcp/tools` tells its listeners: a server's tool list is different now. */
export interface McpToolsChange {
  /** The server's name in the config. */
  readonly server: string
  /** The agent the server belongs to; absent for a global server. */
  readonly agentId?: SessionId
  /** The server's own tool names now, sorted (empty when it went away). */
  readonly tools: readonly string[]
  /** `connected` (listed after a (re)connection), `list-changed` (re-listed after the server's notification), `gone` (the server went away). */
  readonly reason: 'connected' | 'list-changed' | 'gone'
}

/** What `mcp/applied` tells its listeners: an agent's MCP tools changed (dsh tool names, sorted). */
export interface McpAppliedChange {
  readonly agent: Agent
  /** The turn the change applies from (at `agent/pre-step` of its step 1), or 0 when the agent was created. */
  readonly turn: number
  readonly added: readonly string[]
  readonly removed: readonly string[]
  /** Kept names whose description or schema changed. */
  readonly changed: readonly string[]
}

// Dispatched scope-filtered by the server's agent (a global server's events reach every listener);
// listener failures are contained and logged.
declare module 'cordis' {
  interface Events {
    /**
     * An MCP server changed state (`connecting`, `connected`, `restarting`,
     * `failed`, `disabled`, `closed`). `server.error` says why it is not
     * connected, with the server's secrets redacted. Observation only.
     * @mode emit
     */
    'mcp/state'(change: McpStateChange): void
    /**
     * An MCP server's tool list changed: listed after a connection, re-listed
     * after `notifications/tools/list_changed`, or emptied because the server
     * went away. Agents take the change at their next turn boundary (see
     * `mcp/applied`), never in the middle of a turn. Observation only.
     * @mode emit
     */
    'mcp/tools'(change: McpToolsChange): void
    /**
     * An agent's set of MCP tools changed: when it was created, or at the
     * start of a turn (its `agent/pre-step` of step 1), so that the turn's
     * first request carries the new tool list and its later requests keep
     * it. Emitted only when something was added, removed or changed.
     * Observation only.
     * @mode emit
     */
    'mcp/applied'(change: McpAppliedChange): void
  }
}
