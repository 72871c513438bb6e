import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/** One request as the fake provider received it. */
export interface ReceivedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  /** The raw body text, byte for byte. */
  raw: string
  /** The body parsed as JSON. */
  body: unknown
}

/** Answers one request. `closed` resolves when the client side of the exchange goes away (or the response ends). */
export type Handler = (request: ReceivedRequest, res: ServerResponse, closed: Promise<void>) => void | Promise<void>

/** How a `FakeProvider` answers a request for which no handler is queued. */
export interface FakeProviderOptions {
  /**
   * `'refuse'` (the default): a 500 that says no handler was queued.
   * `'hold'`: accept the request and never answer; the exchange ends when
   * the client goes away (a provider that hangs, for deadline tests, whatever
   * the number of attempts the client makes).
   */
  unhandled?: 'refuse' | 'hold'
}

/**
 * A provider's HTTP endpoint on 127.0.0.1, for adapter tests that run over
 * real HTTP (no test needs the internet). Each request is answered by the next
 * queued handler (a request with none gets a 500 that says so, or is held:
 * see `FakeProviderOptions`), and is recorded with its exact body. It knows no
 * provider's format: handlers write the response (see `sse`, `reply`, and
 * `openAiChunk` for the OpenAI chat completions format).
 */
export class FakeProvider {
  readonly requests: ReceivedRequest[] = []
  /** Resolves, per request (by arrival order), when its response closed: ended, or the client went away. */
  readonly closes: Promise<void>[] = []
  private readonly handlers: Handler[] = []
  private readonly sockets = new Set<Socket>()
  private idleWaiters: (() => void)[] = []

  private constructor(
    private readonly server: Server,
    private readonly unhandled: 'refuse' | 'hold',
  ) {
    server.on('connection', (socket) => {
      this.sockets.add(socket)
      socket.on('close', () => {
        this.sockets.delete(socket)
        if (this.sockets.size !== 0 || this.idleWaiters.length === 0) return
        const waiters = this.idleWaiters
        this.idleWaiters = []
        for (const resolve of waiters) resolve()
      })
    })
    server.on('request', (req, res) => void this.accept(req, res))
  }

  static async start(options: FakeProviderOptions = {}): Promise<FakeProvider> {
    const provider = new FakeProvider(createServer(), options.unhandled ?? 'refuse')
    await new Promise<void>((resolve) => provider.server.listen(0, '127.0.0.1', resolve))
    return provider
  }

  /** `http://127.0.0.1:<port>`: the server's origin. */
  get origin(): string {
    const { port } = this.server.address() as AddressInfo
    return `http://127.0.0.1:${port}`
  }

  /** The base URL an OpenAI-compatible client is configured with: the origin plus `/v1`. */
  get url(): string {
    return `${this.origin}/v1`
  }

  /** Queues handlers for the next requests, in order. */
  handle(...handlers: Handler[]): this {
    this.handlers.push(...handlers)
    return this
  }

  /**
   * Resolves once no connection to the server is open (at once when none
   * is): the client released every connection it opened. Call it after the
   * client's call ended; a client that leaks a connection never lets it
   * resolve. A kept-alive idle connection counts as open.
   */
  idle(): Promise<void> {
    if (this.sockets.size === 0) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /**
   * `idle()`, asked when the result is awaited rather than now: what a test
   * arranges before a call (when no connection is open yet) and awaits once
   * the call has ended.
   */
  whenIdle(): PromiseLike<void> {
    const idle = () => this.idle()
    return {
      then(onfulfilled, onrejected) {
        return idle().then(onfulfilled, onrejected)
      },
    }
  }

  private async accept(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pieces: Buffer[] = []
    try {
      for await (const piece of req) pieces.push(piece as Buffer)
    } catch {
      // The client went away while sending its body (a deadline or an abort): nothing to answer.
      return
    }
    const raw = Buffer.concat(pieces).toString('utf8')
    let body: unknown
    try {
      body = JSON.parse(raw)
    } catch {
      body = undefined
    }
    const request: ReceivedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, body }
    this.requests.push(request)
    const closed = new Promise<void>((resolve) => res.on('close', () => resolve()))
    this.closes.push(closed)
    const handler = this.handlers.shift()
    if (!handler) {
      if (this.unhandled === 'hold') return
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: 'the test queued no handler for this request' } }))
      return
    }
    await handler(request, res, closed)
  }

  /** Cuts every open connection and closes the server. */
  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

/** Starts an event stream response. */
export function openStream(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers })
}

/**
 * Writes one server-sent event (`data` objects as JSON, strings verbatim; with
 * an `event` name line when given, as Anthropic's stream has) and waits until
 * it is handed to the socket.
 */
export function send(res: ServerResponse, data: unknown, event?: string): Promise<void> {
  const text = typeof data === 'string' ? data : JSON.stringify(data)
  const name = event === undefined ? '' : `event: ${event}\n`
  return new Promise((resolve) => res.write(`${name}data: ${text}\n\n`, () => resolve()))
}

/** A handler that streams `events` as `data:` events, then the OpenAI `[DONE]` sentinel (unless `done: false`), and ends. */
export function sse(events: unknown[], options: { done?: boolean; headers?: Record<string, string> } = {}): Handler {
  return async (_request, res) => {
    openStream(res, options.headers)
    for (const event of events) await send(res, event)
    if (options.done !== false) await send(res, '[DONE]')
    res.end()
  }
}

/** A handler that answers with a status and a JSON (or text) body. */
export function reply(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_request, res) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body)
    res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...headers })
    res.end(text)
  }
}

/** Everything a request carried (headers and body) as one string: what an echoing server or proxy sends back. */
export function dump(request: ReceivedRequest): string {
  return JSON.stringify({ method: request.method, url: request.url, headers: request.headers, body: request.raw })
}

/**
 * Every request header as a response header `x-echo-<name>`, and
 * `x-request-id` set to the request's `authorization`: what a proxy that
 * reflects headers answers with.
 */
export function echoHeaders(request: ReceivedRequest): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') out[`x-echo-${name}`] = value
  }
  out['x-request-id'] = String(request.headers.authorization ?? '')
  return out
}
