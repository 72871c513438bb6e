import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, afterEach } from 'vitest'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { CallId } from '@deepseek-ai/dsh-llm'
import { spine, type SpineOptions } from '@deepseek-ai/dsh-testkit'
import type { ToolCallResult } from '@deepseek-ai/dsh-tools'
import Mcp, { type McpOptions, type McpServerStatus, type StdioServerConfig } from '@deepseek-ai/dsh-mcp'

const require = createRequire(import.meta.url)

/** The path of a server package's bin, run with this Node (never `npx` at test time). */
function bin(pkg: string): string {
  const manifest = require.resolve(`${pkg}/package.json`)
  const { bin } = require(manifest) as { bin: Record<string, string> }
  return join(dirname(manifest), Object.values(bin)[0]!)
}

/** `@modelcontextprotocol/server-everything` over stdio. */
export function everything(extra: Partial<StdioServerConfig> = {}): StdioServerConfig {
  return { command: process.execPath, args: [bin('@modelcontextprotocol/server-everything'), 'stdio'], ...extra }
}

/** `@modelcontextprotocol/server-filesystem` over stdio, allowed into `root`. */
export function filesystem(root: string): StdioServerConfig {
  return { command: process.execPath, args: [bin('@modelcontextprotocol/server-filesystem'), root] }
}

/** A stdio "server" that starts and never says a word: its handshake never completes. */
export function silent(): StdioServerConfig {
  return { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1 << 30)'] }
}

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A fresh temporary directory, removed after the file's tests. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-mcp-'))
  dirs.push(dir)
  return dir
}

/** Restarts come at once in tests; the backoff's doubling is checked on its own. */
export const FAST_RESTART = { initialDelayMs: 1, maxDelayMs: 1, maxAttempts: 3 }

const roots: Array<{ dispose(): Promise<void> }> = []
afterEach(async () => {
  // Unloading the plugin closes every server (and stops their processes) before the next test.
  for (const root of roots.splice(0)) await root.dispose()
})

/** The real spine with dsh-mcp mounted; the plugin (and its servers) is unloaded after the test. */
export async function mcpSpine(options: McpOptions = {}, spineOptions: SpineOptions = {}) {
  const kit = await spine(spineOptions)
  const fiber = kit.root.plugin(Mcp, { restart: FAST_RESTART, ...options })
  await fiber
  roots.push({
    async dispose() {
      for (const handle of kit.handles) await handle.dispose()
      await fiber.dispose()
    },
  })
  return { ...kit, fiber, mcp: kit.root.mcp }
}

export type McpSpine = Awaited<ReturnType<typeof mcpSpine>>

/** Resolves with the first status of `server` (seen now or announced by `mcp/state`) that `test` accepts. */
export function stateOf(kit: McpSpine, server: string, test: (status: McpServerStatus) => boolean, agent?: Agent): Promise<McpServerStatus> {
  const now = kit.mcp.status(agent).find((status) => status.name === server && test(status))
  if (now) return Promise.resolve(now)
  return new Promise((resolve) => {
    const dispose = kit.root.on('mcp/state', ({ server: status }) => {
      if (status.name !== server || !test(status)) return
      if (agent !== undefined && status.agentId !== undefined && status.agentId !== agent.id) return
      dispose()
      resolve(status)
    })
  })
}

/** `stateOf` for `connected`. */
export function connected(kit: McpSpine, server: string, agent?: Agent): Promise<McpServerStatus> {
  return stateOf(kit, server, (status) => status.state === 'connected', agent)
}

let calls = 0

/** Runs one call through `ctx.tools.execute` (outside a turn), as the loop would. */
export function execute(kit: McpSpine, agent: Agent, name: string, args: object, signal?: AbortSignal): Promise<ToolCallResult> {
  return kit.root.tools.execute({ id: CallId(`call-${++calls}`), name, arguments: JSON.stringify(args) }, { agent, ...(signal ? { signal } : {}) })
}

/** The text of a result's blocks, one line per text block (images as `[image mime]`). */
export function resultText(result: ToolCallResult): string {
  const block = result.message.content[0]
  if (!block || block.type !== 'tool-result') return ''
  return block.content.map((part) => (part.type === 'text' ? part.text : part.type === 'image' ? `[image ${part.mediaType}]` : `[${part.type}]`)).join('\n')
}
