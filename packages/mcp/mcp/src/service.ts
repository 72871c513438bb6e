import type { Agent } from '@deepseek-ai/dsh-agent'
import { emitContained, scopeOf, subjectFilter } from '@deepseek-ai/dsh-scope'
import type { SessionId } from '@deepseek-ai/dsh-session'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { AgentTools } from './agent-tools'
import { McpConfig } from './config'
import { ServerConnection, type ConnectionHooks, type ConnectionOptions } from './connection'
import { Context, Service } from './cordis'
import { McpError } from './errors'
import type { McpAppliedChange, McpStateChange, McpToolsChange } from './events'
import { resolveServer, unresolvedServer, type McpServerConfig, type ResolvedServer } from './server-config'
import { ToolFactory } from './tool-set'
import type { McpServerStatus } from './types'

declare module 'cordis' {
  interface Context {
    mcp: Mcp
  }
}

/** The key of the global servers in `servers` (agent ids are never empty). */
const GLOBAL = ''

/**
 * `ctx.mcp` (R-MCP-1…3): the tools of Model Context Protocol servers as dsh
 * tools.
 *
 * Servers come from the config (global: every agent sees them) or from
 * `add()` (through an agent's scoped context, `agent.ctx.mcp.add(…)`: that
 * agent's only, stopped when it is disposed). Each connects in the
 * background (`ServerConnection`): nothing waits for a server to start, and
 * a server that fails, hangs or exits is retried with backoff while the
 * agents go on without its tools.
 *
 * The tools reach an agent as agent-local `ctx.tools` registrations
 * (`AgentTools`), changed only at two moments: when the agent is created
 * (whatever is connected then), and at the start of each turn, in its
 * `agent/pre-step` of step 1, so the turn's first request carries the new
 * list (one `request/header` change) and its later requests the same. The
 * first turn of an agent waits there for its servers' first connection
 * attempts, at most `startupTimeoutMs` after each server started; servers
 * that connect later join at a later turn.
 */
export class Mcp extends Service {
  static readonly inject = ['tools', 'agents']
  static readonly Config = McpConfig

  private readonly root: Context
  private readonly connectionOptions: ConnectionOptions
  private readonly factory: ToolFactory
  private readonly servers = new Map<string, Map<string, ServerConnection>>()
  private readonly views = new Map<string, AgentTools>()
  private readonly hooks: ConnectionHooks
  private readonly environment: Readonly<Record<string, string | undefined>>
  private readonly log

  constructor(
    ctx: Context,
    readonly config: McpConfig,
  ) {
    super(ctx, 'mcp')
    this.root = ctx
    this.log = ctx.logger('mcp')
    this.environment = config.environment ?? process.env
    this.connectionOptions = { connectTimeoutMs: config.connectTimeoutMs, startupTimeoutMs: config.startupTimeoutMs, restart: config.restart }
    this.factory = new ToolFactory({
      maxOutputChars: config.maxOutputChars,
      maxImageBytes: config.maxImageBytes,
      maxDescriptionChars: config.maxDescriptionChars,
      toolTimeoutMs: config.toolTimeoutMs,
    })
    this.hooks = {
      state: (connection, previous) => this.onState(connection, previous),
      tools: (connection, reason) => this.onTools(connection, reason),
    }

    ctx.on('agent/created', (agent) => this.attach(agent))
    ctx.on('agent/pre-step', (agent, turn, step, _proposed, signal) => (step === 1 ? this.boundary(agent, turn, signal) : undefined))
    ctx.on('agent/disposed', (agent) => void this.views.delete(agent.id))
    ctx.effect(() => {
      for (const [name, raw] of Object.entries(config.servers ?? {})) this.open(GLOBAL, name, raw)
      for (const agent of ctx.agents.list()) this.attach(agent)
      return () => this.shutdown()
    }, 'mcp: servers')
  }

  /**
   * Adds a server for the caller's fiber: local to the agent whose scoped
   * context makes the call (`agent.ctx.mcp.add(…)`, e.g. in the `setup` of
   * `ctx.agents.create`), or global through any other context. The server
   * starts in the background; its tools reach the agent(s) at their next
   * turn. Returns a function that stops and removes it early (it also goes
   * when the caller's fiber is disposed). Throws `INVALID_CONFIG` for a
   * malformed entry or an unset `${VAR}`, `DUPLICATE_SERVER` when the scope
   * already has a server of that name.
   */
  add(name: string, config: McpServerConfig): () => void {
    const key = scopeOf(this.ctx) ?? GLOBAL
    if (this.servers.get(key)?.has(name)) {
      throw new McpError('DUPLICATE_SERVER', `an MCP server named "${name}" already exists ${key === GLOBAL ? 'globally' : `for agent ${key}`}; remove it first or choose another name`)
    }
    const server = resolveServer(name, config, this.environment)
    let connection: ServerConnection | undefined
    const dispose = this.ctx.effect(() => {
      connection = this.start(key, server)
      const opened = connection
      return () => this.stop(key, opened)
    }, `mcp: server ${name}`)
    return () => void dispose()
  }

  /**
   * The servers one agent sees (its own, and the global ones it does not
   * shadow), or, without an agent, every server; each as a frozen snapshot,
   * sorted by name (global ones first). Called through an agent's scoped
   * context, the agent is that one.
   */
  status(agent?: Agent): McpServerStatus[] {
    const agentId = agent?.id ?? scopeOf(this.ctx)
    const connections =
      agentId === undefined ? [...this.servers.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).flatMap(([, scope]) => sortedValues(scope)) : sortedValues(this.visible(agentId))
    return connections.map((connection) => connection.status())
  }

  /** The dsh names of the MCP tools registered for `agent` now, sorted. */
  toolNames(agent?: Agent): string[] {
    const agentId = agent?.id ?? scopeOf(this.ctx)
    return agentId === undefined ? [] : (this.views.get(agentId)?.names() ?? [])
  }

  /**
   * Resolves once the first connection attempt of each server the agent sees
   * (every global server without one) has settled, or `startupTimeoutMs`
   * passed since it started; then the status. For hosts that call tools
   * outside turns (an agent created after this sees what is connected).
   */
  async whenReady(agent?: Agent): Promise<McpServerStatus[]> {
    const agentId = agent?.id ?? scopeOf(this.ctx)
    const connections = agentId === undefined ? sortedValues(this.servers.get(GLOBAL)) : sortedValues(this.visible(agentId))
    await Promise.all(connections.map((connection) => connection.initial))
    return connections.map((connection) => connection.status())
  }

  /** Drops a server's connection and connects again now (also one left `failed`). Throws `UNKNOWN_SERVER`. */
  restart(name: string, agent?: Agent): void {
    this.find(name, agent).restart()
  }

  /**
   * The SDK client of a connected server, for what dsh does not wrap
   * (resources, prompts), or undefined while it is not connected. Calls made
   * through it bypass `ctx.tools`: no permission check, no log. Throws
   * `UNKNOWN_SERVER`.
   */
  client(name: string, agent?: Agent): Client | undefined {
    return this.find(name, agent).client()
  }

  private find(name: string, agent: Agent | undefined): ServerConnection {
    const agentId = agent?.id ?? scopeOf(this.ctx)
    const connection = (agentId === undefined ? this.servers.get(GLOBAL) : this.visible(agentId))?.get(name)
    if (!connection) throw new McpError('UNKNOWN_SERVER', `no MCP server named "${name}"${agentId === undefined ? '' : ` for agent ${agentId}`}; see ctx.mcp.status()`)
    return connection
  }

  /** A config entry: an invalid one becomes a `failed` server that says why, instead of stopping the others. */
  private open(key: string, name: string, raw: unknown): ServerConnection {
    let server: ResolvedServer
    try {
      server = resolveServer(name, raw, this.environment)
    } catch (error) {
      if (!(error instanceof McpError)) throw error
      return this.start(key, unresolvedServer(name, raw), error.message)
    }
    return this.start(key, server)
  }

  private start(key: string, server: ResolvedServer, invalid?: string): ServerConnection {
    const connection = new ServerConnection(server, key === GLOBAL ? undefined : key, this.connectionOptions, this.hooks, invalid)
    let scope = this.servers.get(key)
    if (!scope) this.servers.set(key, (scope = new Map()))
    scope.set(server.name, connection)
    connection.start()
    return connection
  }

  private async stop(key: string, connection: ServerConnection): Promise<void> {
    const scope = this.servers.get(key)
    if (scope?.get(connection.name) === connection) scope.delete(connection.name)
    if (scope?.size === 0) this.servers.delete(key)
    await connection.close()
  }

  private async shutdown(): Promise<void> {
    for (const view of this.views.values()) view.clear()
    this.views.clear()
    const closing: Promise<void>[] = []
    for (const [key, scope] of [...this.servers]) for (const connection of [...scope.values()]) closing.push(this.stop(key, connection))
    await Promise.all(closing)
  }

  /** The connections an agent sees: the global ones, then its own (which shadow a global one of the same name). */
  private visible(agentId: string): Map<string, ServerConnection> {
    const own = this.servers.get(agentId)
    const global = this.servers.get(GLOBAL)
    if (!own) return global ?? new Map()
    if (!global) return own
    return new Map([...global, ...own])
  }

  private attach(agent: Agent): void {
    if (this.views.has(agent.id)) return
    const view = new AgentTools(agent, (error) => this.log.warn('an MCP tool could not be registered: %s', error instanceof Error ? error.message : error))
    this.views.set(agent.id, view)
    this.apply(view, 0)
  }

  /** The start of a turn: the first one waits for the servers' first attempts; then the agent gets the current tools. */
  private async boundary(agent: Agent, turn: number, signal: AbortSignal): Promise<void> {
    const view = this.views.get(agent.id)
    if (!view) return
    const pending = [...this.visible(agent.id).values()].filter((connection) => !view.waited.has(connection))
    if (pending.length > 0) {
      await untilAborted(Promise.all(pending.map((connection) => connection.initial)), signal)
      if (signal.aborted || this.views.get(agent.id) !== view) return
      for (const connection of pending) view.waited.add(connection)
    }
    this.apply(view, turn)
  }

  private apply(view: AgentTools, turn: number): void {
    const change = view.apply(this.factory.entries(this.visible(view.agent.id).values()))
    if (change.added.length + change.removed.length + change.changed.length === 0) return
    const applied: McpAppliedChange = Object.freeze({ agent: view.agent, turn, ...change })
    this.emit(view.agent.id, 'mcp/applied', applied)
  }

  private onState(connection: ServerConnection, previous: McpStateChange['previous']): void {
    const server = connection.status()
    const where = connection.agentId === undefined ? '' : ` (agent ${connection.agentId})`
    if (server.state === 'connected') this.log.info('MCP server "%s"%s connected: %d tools', server.name, where, server.tools.length)
    else if (server.state === 'restarting') this.log.warn('MCP server "%s"%s: %s; retrying in %d ms', server.name, where, server.error, (server.retryAt ?? Date.now()) - Date.now())
    else if (server.state === 'failed') this.log.warn('MCP server "%s"%s failed: %s', server.name, where, server.error)
    this.emit(connection.agentId, 'mcp/state', Object.freeze({ server, previous }))
  }

  private onTools(connection: ServerConnection, reason: McpToolsChange['reason']): void {
    const change: McpToolsChange = Object.freeze({
      server: connection.name,
      ...(connection.agentId !== undefined ? { agentId: connection.agentId as SessionId } : {}),
      tools: Object.freeze(connection.tools.map((tool) => tool.name)),
      reason,
    })
    this.emit(connection.agentId, 'mcp/tools', change)
  }

  private emit(agentId: string | undefined, name: 'mcp/state' | 'mcp/tools' | 'mcp/applied', change: object): void {
    emitContained(this.root, agentId === undefined ? null : subjectFilter(agentId), name, [change], (error) =>
      this.log.warn(`a ${name} listener failed: %s`, error instanceof Error ? error.message : error),
    )
  }
}

function sortedValues(scope: Map<string, ServerConnection> | undefined): ServerConnection[] {
  if (!scope) return []
  return [...scope.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** Resolves when `task` settles or `signal` aborts, whichever is first. */
function untilAborted(task: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve()
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
    task.then(done, done)
  })
}

export namespace Mcp {
  export type Config = McpConfig
}
