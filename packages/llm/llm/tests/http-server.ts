import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** Answers one request; `closed` settles when the response closes (ended, or the client went away). */
export type Answer = (req: IncomingMessage, res: ServerResponse, closed: Promise<void>) => void | Promise<void>

/**
 * A local HTTP server on 127.0.0.1 for the HTTP exchange tests: each request
 * is answered by the next queued `Answer`, and every request's close is kept
 * so a test can wait until the client side of an exchange went away.
 */
export class LocalServer {
  private readonly answers: Answer[] = []
  /** Resolves per request, in arrival order, when its response closed. */
  readonly closes: Promise<void>[] = []
  /** The bodies of the requests received, in order. */
  readonly bodies: string[] = []

  private constructor(private readonly server: Server) {}

  static async start(): Promise<LocalServer> {
    const server = createServer()
    const local = new LocalServer(server)
    server.on('request', (req, res) => void local.serve(req, res))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return local
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  /** Queues the answer to the next request. */
  answer(answer: Answer): void {
    this.answers.push(answer)
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const closed = new Promise<void>((resolve) => res.on('close', () => resolve()))
    this.closes.push(closed)
    let body = ''
    for await (const piece of req) body += String(piece)
    this.bodies.push(body)
    const answer = this.answers.shift()
    if (!answer) {
      res.writeHead(500).end('no answer queued')
      return
    }
    await answer(req, res, closed)
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

/** An answer with a status, headers and a body. */
export const reply =
  (status: number, body: string, headers: Record<string, string> = {}): Answer =>
  (_req, res) =>
    void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body)
