import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { deferred } from '@deepseek-ai/dsh-testkit'
import { z } from 'zod'

/** One call of the `hold` tool, waiting for the test. */
export interface HeldCall {
  readonly key: string
  /** Resolves with the cancellation's reason when the client cancels the call (`notifications/cancelled`). */
  readonly cancelled: Promise<string>
  release(text: string): void
}

/**
 * A Streamable HTTP MCP server on 127.0.0.1, built with the SDK's own server
 * classes (`McpServer`, `StreamableHTTPServerTransport`), one MCP session per
 * client. Its tools: `add` (read-only), `hold` (waits until the test
 * releases it; reports cancellation), `whoami` (echoes the Authorization
 * header it was sent). The test can add tools at run time (the SDK sends
 * `list_changed`), hold the handshake, and stop the server.
 */
export class TestHttpServer {
  readonly held: HeldCall[] = []
  /** Resolves each time a call of `hold` starts (replaced after each). */
  holdStarted = deferred<HeldCall>()
  /** Resolves when a client opened its notification stream (GET), after which `list_changed` reaches it. */
  streamOpen = deferred<void>()
  /** Set to hold every `initialize` until it resolves. */
  gate: Promise<void> | undefined
  /** Requests seen: `METHOD rpc-method` (or just the HTTP method). */
  readonly requests: string[] = []
  private readonly sessions = new Map<string, { server: McpServer; transport: StreamableHTTPServerTransport }>()
  private readonly extra: Array<(server: McpServer) => void> = []
  private readonly sockets = new Set<Socket>()
  private constructor(
    private readonly http: Server,
    readonly url: string,
  ) {}

  /** Listens on 127.0.0.1, on `port` (a free one by default). */
  static async start(port: number | string = 0): Promise<TestHttpServer> {
    let self: TestHttpServer | undefined
    const http = createServer((req, res) => void self!.handle(req, res))
    await new Promise<void>((resolve) => http.listen(Number(port), '127.0.0.1', resolve))
    const bound = (http.address() as AddressInfo).port
    self = new TestHttpServer(http, `http://127.0.0.1:${bound}/mcp`)
    http.on('connection', (socket) => {
      self!.sockets.add(socket)
      socket.on('close', () => self!.sockets.delete(socket))
    })
    return self
  }

  /** Adds a tool to every session, now and later (each open session sends `list_changed`). */
  addTool(name: string, text: string): void {
    const register = (server: McpServer) =>
      server.registerTool(name, { description: `Answers ${text}.`, annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text }] }))
    this.extra.push(register)
    for (const { server } of this.sessions.values()) register(server)
  }

  /** Stops answering: every open connection is cut and the port closed. */
  async stop(): Promise<void> {
    for (const { transport } of this.sessions.values()) await transport.close().catch(() => {})
    this.sessions.clear()
    for (const socket of this.sockets) socket.destroy()
    await new Promise<void>((resolve) => this.http.close(() => resolve()))
  }

  private session(): { server: McpServer; transport: StreamableHTTPServerTransport } {
    const server = new McpServer({ name: 'dsh-test-http', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } })
    server.registerTool('add', { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } }, async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
    }))
    server.registerTool('hold', { description: 'Waits until released.', inputSchema: { key: z.string() } }, async ({ key }, extra) => {
      const released = deferred<string>()
      const cancelled = deferred<string>()
      extra.signal.addEventListener('abort', () => cancelled.resolve(String(extra.signal.reason ?? 'aborted')), { once: true })
      const call: HeldCall = { key, cancelled: cancelled.promise, release: (text) => released.resolve(text) }
      this.held.push(call)
      const started = this.holdStarted
      this.holdStarted = deferred<HeldCall>()
      started.resolve(call)
      const text = await Promise.race([released.promise, cancelled.promise.then(() => 'cancelled')])
      return { content: [{ type: 'text', text }] }
    })
    server.registerTool('whoami', { description: 'Says which Authorization header the request carried.' }, async (extra) => ({
      content: [{ type: 'text', text: `authorization: ${String(extra.requestInfo?.headers.authorization ?? '(none)')}` }],
    }))
    for (const register of this.extra) register(server)
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, { server, transport }),
    })
    return { server, transport }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = req.method === 'POST' ? await readJson(req) : undefined
    const method = body && typeof body === 'object' && 'method' in body ? String((body as { method: unknown }).method) : ''
    this.requests.push(method ? `${req.method} ${method}` : String(req.method))
    const id = req.headers['mcp-session-id']
    const known = typeof id === 'string' ? this.sessions.get(id) : undefined
    if (known) {
      if (req.method === 'GET') this.streamOpen.resolve()
      await known.transport.handleRequest(req, res, body)
      return
    }
    if (method !== 'initialize') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }))
      return
    }
    if (this.gate) await this.gate
    const fresh = this.session()
    await fresh.server.connect(fresh.transport)
    await fresh.transport.handleRequest(req, res, body)
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  return text ? JSON.parse(text) : undefined
}
