import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import { ErrorCode, McpError as ProtocolError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { existsSync } from 'node:fs'
import { callError } from './errors'
import type { ResolvedServer } from './server-config'
import { StderrTail, openLink, type Link } from './transport'
import type { McpServerState, McpServerStatus } from './types'

/** How a connection retries. */
export interface RestartPolicy {
  /** Delay before the first retry; it doubles with each retry in a row. */
  readonly initialDelayMs: number
  /** The longest delay; a connection that stayed up this long starts the doubling over. */
  readonly maxDelayMs: number
  /** Connection attempts in a row that may fail before the server is left `failed`. */
  readonly maxAttempts: number
}

export interface ConnectionOptions {
  /** Deadline of one attempt's handshake and first listing. */
  readonly connectTimeoutMs: number
  /** How long the first request of an agent waits for this server's first attempt. */
  readonly startupTimeoutMs: number
  readonly restart: RestartPolicy
}

/** What a connection tells its owner. Called synchronously; must not throw. */
export interface ConnectionHooks {
  /** The state changed (`previous` → `connection.state`). */
  state(connection: ServerConnection, previous: McpServerState): void
  /** The tool list changed (listed on connect, re-listed on `list_changed`, or emptied because the server went away). */
  tools(connection: ServerConnection, reason: 'connected' | 'list-changed' | 'gone'): void
}

/**
 * The delay before retry number `streak` in a row (1-based): `initialDelayMs`,
 * doubled for each retry before it, at most `maxDelayMs`.
 */
export function restartDelay(policy: RestartPolicy, streak: number): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, Math.min(streak - 1, 30)))
}

/** The most pages of `tools/list` one listing reads. */
const MAX_LIST_PAGES = 100

/** The longest delay a timer holds; the SDK's own request timeout is set to it so only dsh-tools' deadline applies. */
const NO_TIMEOUT = 2 ** 31 - 1

/**
 * One configured MCP server and its connection over time (R-MCP-3): it
 * connects in the background, lists its tools (following
 * `notifications/tools/list_changed`), and when an attempt fails or the
 * server goes away (a stdio child exits, an HTTP server stops answering) it
 * empties its tool list, fails the calls in flight, and tries again after a
 * delay that doubles up to `maxDelayMs`, until `maxAttempts` attempts in a
 * row failed (`failed`).
 *
 * Every callback of an SDK client carries the attempt's generation, so what
 * a replaced or closed client reports later is ignored.
 */
export class ServerConnection {
  state: McpServerState = 'connecting'
  /** The server's tools, sorted by name (empty unless connected). */
  tools: readonly Tool[] = []
  /** Settles when the first attempt settled or `startupTimeoutMs` passed, whichever is first. */
  readonly initial: Promise<void>
  error: string | undefined
  attempts = 0
  retryAt: number | undefined
  serverInfo: { name: string; version: string } | undefined
  private link: Link | undefined
  private generation = 0
  private streak = 0
  private connectedAt = 0
  private timer: NodeJS.Timeout | undefined
  private toolsJson = '[]'
  /** The last object seen for each tool name. */
  private readonly known = new Map<string, Tool>()
  private listing: Promise<void> | undefined
  private relistWanted = false
  private settleInitial!: () => void
  private readonly stderr = new StderrTail()

  constructor(
    readonly server: ResolvedServer,
    /** The agent the server belongs to; undefined for a global one. */
    readonly agentId: string | undefined,
    private readonly options: ConnectionOptions,
    private readonly hooks: ConnectionHooks,
    /** Set when the config could not be resolved: the server never starts and says why. */
    private readonly invalid?: string,
  ) {
    this.initial = new Promise<void>((resolve) => (this.settleInitial = resolve))
  }

  get name(): string {
    return this.server.name
  }

  /** Starts the first attempt (or settles as `disabled` / `failed` for an entry that cannot start). */
  start(): void {
    if (this.invalid !== undefined) {
      this.error = this.invalid
      this.setState('failed')
      this.settleInitial()
      return
    }
    if (this.server.disabled) {
      this.setState('disabled')
      this.settleInitial()
      return
    }
    const deadline = setTimeout(() => this.settleInitial(), this.options.startupTimeoutMs)
    deadline.unref()
    void this.initial.then(() => clearTimeout(deadline))
    void this.attempt()
  }

  /** Stops the server for good: no more attempts; the calls in flight fail. */
  async close(): Promise<void> {
    this.closedGeneration = this.generation
    this.generation++
    clearTimeout(this.timer)
    this.retryAt = undefined
    this.settleInitial()
    const link = this.link
    this.link = undefined
    if (this.tools.length > 0) this.setTools([], 'gone')
    if (this.state !== 'closed') this.setState('closed')
    this.retire(link)
    // Every link dropped before (a failed attempt, a lost or restarted connection) may still be stopping its
    // process: the SDK ends a child's stdin, then SIGTERMs it only after 2 s on an unref'd timer, so a host
    // that went on and exited meanwhile would leave a server that ignores its stdin running.
    await Promise.all(this.retiring)
  }

  /**
   * The generations whose connection dsh dropped itself (`close()`, `restart()`): a call in flight then
   * was ended by dsh, not by the server, and its error says so.
   */
  private closedGeneration: number | undefined
  private restartedGeneration: number | undefined

  /** Links being closed, each removed once its close settled. */
  private readonly retiring = new Set<Promise<void>>()

  /** Closes a dropped link in the background, tracked so that `close()` waits for it. */
  private retire(link: Link | undefined): void {
    if (!link) return
    const closing: Promise<void> = link.close().then(
      () => void this.retiring.delete(closing),
      () => void this.retiring.delete(closing),
    )
    this.retiring.add(closing)
  }

  /** Drops the current connection (if any) and tries again now, with a fresh count of attempts. */
  restart(): void {
    if (this.state === 'closed' || this.invalid !== undefined || this.server.disabled) return
    this.restartedGeneration = this.generation
    this.generation++
    clearTimeout(this.timer)
    const link = this.link
    this.link = undefined
    this.retire(link)
    this.attempts = 0
    this.streak = 0
    void this.attempt()
  }

  /** The connected SDK client, for what dsh does not wrap (resources, prompts). */
  client(): Link['client'] | undefined {
    return this.state === 'connected' ? this.link?.client : undefined
  }

  /**
   * Calls one tool and resolves the server's result. Throws a `ToolError`:
   * `SERVER_UNAVAILABLE` when the server is not connected or goes away during
   * the call, `SERVER_ERROR` for a protocol error, `TIMEOUT` when the SDK's
   * own deadline passes; an abort of `signal` sends `notifications/cancelled`
   * and rethrows the abort (dsh-tools turns it into `ABORTED` or `TIMEOUT`).
   */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const link = this.link
    if (this.state !== 'connected' || link === undefined) throw callError('SERVER_UNAVAILABLE', this.unavailable())
    const generation = this.generation
    try {
      return (await link.client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: NO_TIMEOUT })) as CallToolResult
    } catch (error) {
      if (signal.aborted) throw error
      throw this.callFailure(error, generation)
    }
  }

  /** A frozen snapshot for `ctx.mcp.status()`. */
  status(): McpServerStatus {
    const redactor = this.server.redactor
    const pid = this.state === 'connected' || this.state === 'connecting' ? this.link?.pid() : undefined
    const stderr = this.stderr.read((text) => redactor.redact(text))
    return Object.freeze({
      name: this.name,
      ...(this.agentId !== undefined ? { agentId: this.agentId as McpServerStatus['agentId'] } : {}),
      transport: this.server.transport,
      state: this.state,
      tools: Object.freeze(this.tools.map((tool) => tool.name)),
      ...(this.error !== undefined ? { error: this.error } : {}),
      attempts: this.attempts,
      ...(this.retryAt !== undefined ? { retryAt: this.retryAt } : {}),
      ...(pid !== undefined ? { pid } : {}),
      ...(this.serverInfo ? { serverInfo: Object.freeze({ ...this.serverInfo }) } : {}),
      ...(stderr.length > 0 ? { stderr } : {}),
    })
  }

  /** Why a call cannot go through now, for the model. */
  unavailable(): string {
    const name = `the MCP server "${this.name}"`
    switch (this.state) {
      case 'connecting':
        return `${name} is still starting; try again in a moment`
      case 'restarting':
        return `${name} is not connected (${this.error ?? 'it went away'}); it is being restarted`
      case 'failed':
        return `${name} is not available (${this.error ?? 'it failed to start'})`
      case 'disabled':
        return `${name} is disabled in the configuration`
      default:
        return `${name} is no longer connected`
    }
  }

  private async attempt(): Promise<void> {
    const generation = ++this.generation
    this.retryAt = undefined
    this.setState('connecting')
    const link = openLink(this.server, this.stderr)
    this.link = link
    const { client } = link
    // The SDK's stdio transport drops the connection itself when one message from the server passes its read
    // limit (a huge tool answer): the close that follows must say that, not that the process exited.
    let dropped: string | undefined
    client.onerror = (error) => {
      const limit = /^ReadBuffer exceeded maximum size of (\d+) bytes/.exec(error.message)?.[1]
      if (limit !== undefined) {
        dropped = `a message it sent was larger than the ${mebibytes(Number(limit))} the MCP client reads at once (a tool answer that large must be asked for in parts), so the connection was dropped`
      }
    }
    client.onclose = () => this.lost(generation, dropped ?? (this.server.transport === 'stdio' ? 'its process exited' : 'the connection closed'))
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.relist(generation))
    try {
      await client.connect(link.transport, { timeout: this.options.connectTimeoutMs })
      if (generation !== this.generation) return
      const tools = await this.list(link, this.options.connectTimeoutMs)
      if (generation !== this.generation) return
      const info = client.getServerVersion()
      this.serverInfo = info ? { name: String(info.name), version: String(info.version) } : undefined
      this.attempts = 0
      this.error = undefined
      this.connectedAt = Date.now()
      this.setTools(tools, 'connected')
      this.setState('connected')
      this.settleInitial()
      // A list_changed that arrived during the first listing.
      if (this.relistWanted) this.relist(generation)
    } catch (error) {
      if (generation !== this.generation) return
      this.link = undefined
      this.retire(link)
      this.attempts++
      this.streak++
      this.error = this.describe(error, 'could not connect', this.missingCwd(error))
      this.settleInitial()
      this.scheduleRetry(generation)
    }
  }

  /**
   * Every page of `tools/list`, sorted by name; tools that can only run as
   * tasks are left out (see the README). A cursor the server already named
   * ends the listing (a pagination bug would otherwise list forever, the
   * attempt never ending); more than `MAX_LIST_PAGES` pages fail it.
   */
  private async list(link: Link, timeout: number): Promise<Tool[]> {
    const tools: Tool[] = []
    let cursor: string | undefined
    const seen = new Set<string>()
    const cursors = new Set<string>()
    for (let pages = 0; ; pages++) {
      if (pages === MAX_LIST_PAGES) throw new Error(`its tools/list returned more than ${MAX_LIST_PAGES} pages; the listing was given up`)
      const page = await link.client.listTools(cursor === undefined ? undefined : { cursor }, { timeout })
      for (const tool of page.tools) {
        if (seen.has(tool.name) || tool.execution?.taskSupport === 'required') continue
        seen.add(tool.name)
        tools.push(tool)
      }
      cursor = page.nextCursor
      if (cursor === undefined || cursor === '' || cursors.has(cursor)) break
      cursors.add(cursor)
    }
    return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  /** Re-lists after `list_changed`; notifications that arrive meanwhile fold into one more listing. */
  private relist(generation: number): void {
    if (generation !== this.generation) return
    if (this.state !== 'connected' || this.listing) {
      this.relistWanted = true
      return
    }
    this.relistWanted = false
    const link = this.link!
    this.listing = this.list(link, this.options.connectTimeoutMs).then(
      (tools) => {
        this.listing = undefined
        if (generation !== this.generation) return
        this.setTools(tools, 'list-changed')
        if (this.relistWanted) this.relist(generation)
      },
      (error) => {
        this.listing = undefined
        if (generation !== this.generation) return
        // Keep the last list; a server that cannot list is likely going away (its close says so).
        this.error = this.describe(error, 'could not list its tools after a change')
        if (this.relistWanted) this.relist(generation)
      },
    )
  }

  /** The server went away: tools leave, calls in flight fail (the SDK rejects them), and a retry is scheduled. */
  private lost(generation: number, why: string): void {
    if (generation !== this.generation || this.state !== 'connected') return
    this.generation++
    const link = this.link
    this.link = undefined
    this.retire(link)
    if (Date.now() - this.connectedAt >= this.options.restart.maxDelayMs) this.streak = 0
    this.streak++
    this.error = why
    this.setTools([], 'gone')
    this.scheduleRetry(this.generation)
  }

  private scheduleRetry(generation: number): void {
    const { restart } = this.options
    if (this.attempts >= restart.maxAttempts) {
      this.retryAt = undefined
      this.setState('failed')
      return
    }
    const delay = restartDelay(restart, this.streak)
    this.retryAt = Date.now() + delay
    this.setState('restarting')
    this.timer = setTimeout(() => {
      if (generation === this.generation) void this.attempt()
    }, delay)
    this.timer.unref()
  }

  private callFailure(error: unknown, generation: number): Error {
    if (error instanceof ProtocolError) {
      if (error.code === ErrorCode.ConnectionClosed) {
        const unknown = 'whether the tool did anything is unknown'
        if (generation === this.closedGeneration) {
          return callError('SERVER_UNAVAILABLE', `dsh closed its connection to the MCP server "${this.name}" during the call (dsh-mcp or the server's owner is unloading); ${unknown}`)
        }
        if (generation === this.restartedGeneration) {
          return callError('SERVER_UNAVAILABLE', `dsh restarted the MCP server "${this.name}" during the call (restart() was asked for); ${unknown}`)
        }
        return callError('SERVER_UNAVAILABLE', `the MCP server "${this.name}" went away during the call (${this.error ?? 'the connection closed'}); ${unknown}`)
      }
      if (error.code === ErrorCode.RequestTimeout) return callError('TIMEOUT', `the MCP server "${this.name}" did not answer in time`)
      return callError('SERVER_ERROR', this.server.redactor.redact(`the MCP server "${this.name}" refused the call: ${error.message}`))
    }
    // Not a protocol answer: the transport failed (an HTTP server that stopped answering) or the answer was malformed.
    const message = this.describe(error, 'could not be reached')
    if (this.server.transport === 'http' && isTransportFailure(error)) {
      if (generation === this.generation && this.state === 'connected') this.lost(generation, message)
      return callError('SERVER_UNAVAILABLE', `the MCP server "${this.name}" ${message}; it is being reconnected`)
    }
    return callError('SERVER_ERROR', `the MCP server "${this.name}" gave an answer that is not a valid tool result (${message})`)
  }

  /**
   * Node reports a stdio server's missing working directory as the command's
   * ENOENT (`spawn /usr/bin/node ENOENT`): when the configured `cwd` is what
   * is missing, that is the problem to name.
   */
  private missingCwd(error: unknown): string | undefined {
    const server = this.server
    if (server.transport !== 'stdio' || server.cwd === undefined) return undefined
    const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown }
    if (code !== 'ENOENT' || typeof syscall !== 'string' || !syscall.startsWith('spawn') || existsSync(server.cwd)) return undefined
    return `its working directory ${server.cwd} does not exist`
  }

  /** A failure in a person's words, redacted (never the env or header values); `problem` leads when known. */
  private describe(error: unknown, what: string, problem?: string): string {
    let detail = error instanceof Error ? error.message : String(error)
    const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined
    if (cause && typeof cause.message === 'string' && !detail.includes(cause.message)) detail += `: ${cause.message}`
    if (error instanceof ProtocolError && error.code === ErrorCode.RequestTimeout) detail = `no answer within ${this.options.connectTimeoutMs} ms`
    detail = detail.replace(/^MCP error -?\d+: /, '')
    return this.server.redactor.redact(`${what}: ${problem === undefined ? detail : `${problem} (${detail})`}`)
  }

  private setTools(tools: readonly Tool[], reason: 'connected' | 'list-changed' | 'gone'): void {
    const json = JSON.stringify(tools)
    if (json === this.toolsJson) return
    // A tool that did not change (also across a restart) keeps its old object, so the agents'
    // definitions of it stay the same ones and nothing is registered again.
    this.toolsJson = json
    this.tools = tools.map((tool) => {
      const old = this.known.get(tool.name)
      if (old !== undefined && JSON.stringify(old) === JSON.stringify(tool)) return old
      this.known.set(tool.name, tool)
      return tool
    })
    this.hooks.tools(this, reason)
  }

  private setState(state: McpServerState): void {
    const previous = this.state
    this.state = state
    if (previous !== state) this.hooks.state(this, previous)
  }
}

/** Whether a call failed below MCP: the HTTP request could not be made or was answered with an HTTP error. */
function isTransportFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  return error instanceof StreamableHTTPError || error.name === 'TypeError' || /fetch failed|ECONNREFUSED|ECONNRESET|socket/i.test(error.message)
}

function mebibytes(bytes: number): string {
  const mib = bytes / 1024 / 1024
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`
}
