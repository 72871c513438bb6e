import type { Agent } from '@deepseek-ai/dsh-agent'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'
import type { ServerConnection } from './connection'
import type { McpToolEntry } from './tool-set'

/** What one application changed in an agent's tool set: dsh tool names, sorted. */
export interface AppliedChange {
  readonly added: readonly string[]
  readonly removed: readonly string[]
  /** Names kept whose definition changed (a new description or schema from the server). */
  readonly changed: readonly string[]
}

/**
 * The MCP tools registered for one agent, as agent-local tools of
 * `ctx.tools` (so no other agent sees them and they revert with the agent).
 *
 * They change only when `apply` is called: when the agent is created and at
 * the start of each turn (`agent/pre-step` of step 1). Between two
 * applications the agent's tool list stays exactly as it was, whatever the
 * servers do, so every request of a turn has the same prefix; a tool whose
 * server went away stays listed until then and answers `SERVER_UNAVAILABLE`.
 */
export class AgentTools {
  private readonly registered = new Map<string, { definition: ToolDefinition; remove: () => void }>()
  /** Servers whose first attempt this agent's first request already waited for. */
  readonly waited = new WeakSet<ServerConnection>()

  constructor(
    readonly agent: Agent,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** The dsh names registered now, sorted. */
  names(): string[] {
    return [...this.registered.keys()].sort()
  }

  /**
   * Makes the agent's registrations equal `entries`: a name whose definition
   * is the same object stays registered (no `tools/change`); the others are
   * removed or registered. Returns what changed.
   */
  apply(entries: readonly McpToolEntry[]): AppliedChange {
    const wanted = new Map(entries.map((entry) => [entry.name, entry.definition]))
    const added: string[] = []
    const removed: string[] = []
    const changed = new Set<string>()
    for (const [name, current] of this.registered) {
      const next = wanted.get(name)
      if (next === current.definition) continue
      this.unregister(name, current.remove)
      if (next === undefined) removed.push(name)
      else changed.add(name)
    }
    for (const [name, definition] of wanted) {
      if (this.registered.has(name)) continue
      try {
        const remove = this.agent.ctx.tools.register(definition)
        this.registered.set(name, { definition, remove })
        if (!changed.has(name)) added.push(name)
      } catch (error) {
        // A definition the registry refuses (a server's malformed schema) leaves that one tool out.
        if (changed.delete(name)) removed.push(name)
        this.onError(error)
      }
    }
    return { added: added.sort(), removed: removed.sort(), changed: [...changed].sort() }
  }

  /** Removes every registration (the plugin is unloading). */
  clear(): void {
    for (const [name, current] of this.registered) this.unregister(name, current.remove)
  }

  private unregister(name: string, remove: () => void): void {
    this.registered.delete(name)
    try {
      remove()
    } catch (error) {
      this.onError(error)
    }
  }
}
