import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { ResolvedServer } from './server-config'

/** The client's name and version in the MCP handshake. */
export const CLIENT_INFO = Object.freeze({ name: 'dsh', version: '0.0.0' })

/** The last bytes a stdio server wrote to its standard error, kept for status (never logged). */
export class StderrTail {
  static readonly MAX_CHARS = 2000
  private text = ''

  push(chunk: string): void {
    this.text += chunk
    if (this.text.length > StderrTail.MAX_CHARS * 2) this.text = this.text.slice(-StderrTail.MAX_CHARS)
  }

  /** The last `MAX_CHARS` characters, from the start of a line where one is near. */
  read(): string {
    let text = this.text.length > StderrTail.MAX_CHARS ? this.text.slice(-StderrTail.MAX_CHARS) : this.text
    if (text.length < this.text.length) {
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
    return {
      client,
      transport,
      pid: () => transport.pid ?? undefined,
      close: () => client.close(),
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
