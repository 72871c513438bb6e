import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { ChildProcess } from 'node:child_process'
import type { ResolvedServer } from './server-config'

/** The client's name and version in the MCP handshake. */
export const CLIENT_INFO = Object.freeze({ name: 'dsh', version: '0.0.0' })

/** The last bytes a stdio server wrote to its standard error, kept for status (never logged). */
export class StderrTail {
  static readonly MAX_CHARS = 2000
  /**
   * What the buffer keeps after a trim: well beyond `MAX_CHARS`, so that a
   * secret the trim cut in two lies outside what `read` returns.
   */
  private static readonly KEPT = 4 * StderrTail.MAX_CHARS
  private text = ''

  push(chunk: string): void {
    this.text += chunk
    if (this.text.length > StderrTail.KEPT * 2) this.text = this.text.slice(-StderrTail.KEPT)
  }

  /**
   * The last `MAX_CHARS` characters, from the start of a line where one is
   * near, of the buffer passed through `redact` first: a cut inside a
   * secret would leave a piece that no longer matches it.
   */
  read(redact: (text: string) => string = (text) => text): string {
    const whole = redact(this.text)
    let text = whole.length > StderrTail.MAX_CHARS ? whole.slice(-StderrTail.MAX_CHARS) : whole
    if (text.length < whole.length) {
      const newline = text.indexOf('\n')
      if (newline >= 0 && newline < 200) text = text.slice(newline + 1)
    }
    return text.trimEnd()
  }
}

/** One attempt's client and transport. */
export interface Link {
  readonly client: Client
  readonly transport: Transport
  /** The child's process id (stdio), once spawned. */
  pid(): number | undefined
  /** Closes the link: ends an HTTP session (best effort), then stops a child (stdin closed, then SIGTERM, then SIGKILL). */
  close(): Promise<void>
}

/**
 * A fresh SDK client and transport for one connection attempt. A stdio
 * server's standard error is piped into `stderr` (and so always drained: a
 * full pipe would block the server) instead of the agent's terminal.
 */
export function openLink(server: ResolvedServer, stderr: StderrTail): Link {
  const client = new Client({ ...CLIENT_INFO }, { capabilities: {} })
  if (server.transport === 'stdio') {
    const transport = new StdioClientTransport({
      command: server.command,
      args: [...server.args],
      env: { ...server.env },
      ...(server.cwd !== undefined ? { cwd: server.cwd } : {}),
      stderr: 'pipe',
    })
    transport.stderr?.on('data', (chunk: Buffer | string) => stderr.push(String(chunk)))
    // The child, kept from its spawn: the SDK forgets it as soon as a close starts (its own close on a
    // failed handshake included), and stops it on unref'd timers that a host exiting meanwhile never runs.
    let child: ChildProcess | undefined
    const start = transport.start.bind(transport)
    transport.start = async () => {
      const started = start()
      child = (transport as unknown as { _process?: ChildProcess })._process
      await started
    }
    return {
      client,
      transport,
      pid: () => transport.pid ?? undefined,
      async close() {
        await client.close()
        if (child) await stopChild(child)
      },
    }
  }
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: { ...server.headers } },
  })
  return {
    client,
    transport,
    pid: () => undefined,
    async close() {
      // Ends the server's session so it can free what it holds; a server that is gone cannot answer.
      if (transport.sessionId !== undefined) await within(transport.terminateSession(), 2000)
      await client.close()
    },
  }
}

/**
 * Resolves once `child` has exited: at once if it has; else after its stdin
 * closed it gets 2 s to exit on its own, then SIGTERM and 2 s more, then
 * SIGKILL (the SDK's own order, on timers that keep the host alive until the
 * child is gone).
 */
async function stopChild(child: ChildProcess): Promise<void> {
  const done = () => child.exitCode !== null || child.signalCode !== null
  if (done()) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const waited = async (ms: number): Promise<boolean> => {
    let timer: NodeJS.Timeout | undefined
    const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))])
    clearTimeout(timer)
    return gone || done()
  }
  try {
    child.stdin?.end()
  } catch {
    // A closed pipe: the child is on its way out.
  }
  if (await waited(2000)) return
  child.kill('SIGTERM')
  if (await waited(2000)) return
  child.kill('SIGKILL')
  await waited(2000)
}

/** Waits for `task` at most `ms` milliseconds; its failure is ignored (a closing link reports nothing). */
function within(task: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms)
    timer.unref()
  })
  return Promise.race([task.then(
    () => {},
    () => {},
  ), deadline]).finally(() => clearTimeout(timer))
}
