/**
 * Scenario 8, MCP call overhead (PLUGINS §9: what dsh adds to an MCP tool
 * call is ≤ 200 µs). `@modelcontextprotocol/server-everything` runs over
 * stdio under dsh-mcp; on its one connection the run alternates `calls`
 * raw `Client.callTool` calls of its `echo` tool (the SDK client dsh-mcp
 * holds, `ctx.mcp.client('everything')`) with `calls` calls of the same tool
 * through `ctx.tools.execute` (`mcp__everything__echo`: the dsh-tools
 * pipeline, dsh-mcp's definition, the result mapping and redaction). The
 * overhead is the median of the second minus the median of the first; both
 * include the same process round trip, so what remains is dsh's part.
 *
 * When the server cannot start here the run is skipped (`ScenarioSkipped`)
 * with its state and error.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { ScenarioSkipped, defineScenario, type Metrics } from '../lib/scenario.ts'
import { median } from '../lib/measure.ts'

interface Params {
  calls: number
  warmup: number
}

/** The server's bin, run with this Node (never `npx`). */
function everythingBin(): string {
  const require = createRequire(import.meta.url)
  const manifest = require.resolve('@modelcontextprotocol/server-everything/package.json')
  const { bin } = require(manifest) as { bin: Record<string, string> }
  return join(dirname(manifest), Object.values(bin)[0]!)
}

async function mcpCallOverhead(_subject: string, params: Params): Promise<Metrics> {
  const dsh = await import('../subjects/dsh.ts')
  const { default: Mcp } = await import('@deepseek-ai/dsh-mcp')
  const { CallId } = await import('@deepseek-ai/dsh-llm')
  const spine = await dsh.spine({ respond: dsh.answerResponder })
  try {
    await spine.root.plugin(Mcp, { servers: { everything: { command: process.execPath, args: [everythingBin(), 'stdio'] } }, startupTimeoutMs: 60_000 })
    const [status] = await spine.root.mcp.whenReady()
    const client = spine.root.mcp.client('everything')
    if (status?.state !== 'connected' || client === undefined) {
      const why = `${status?.state ?? 'no status'}: ${String(status?.error ?? 'no error').split('\n')[0]}`
      throw new ScenarioSkipped(`@modelcontextprotocol/server-everything did not start over stdio (${why}); \`pnpm install\` provides it`)
    }
    const { agent } = await spine.create('bench-mcp')
    // Held once, as the loop holds it: a lookup through the context costs Cordis an Error per access.
    const tools = spine.root.tools
    const args = { message: 'hello' }
    const json = JSON.stringify(args)
    let id = 0
    const raw = async () => {
      const t0 = performance.now()
      await client.callTool({ name: 'echo', arguments: args })
      return performance.now() - t0
    }
    const viaDsh = async () => {
      const t0 = performance.now()
      const result = await tools.execute({ id: CallId(`c${++id}`), name: 'mcp__everything__echo', arguments: json }, { agent })
      const elapsed = performance.now() - t0
      if (result.error) throw new Error(`mcp__everything__echo failed: ${result.error.message}`)
      return elapsed
    }
    for (let i = 0; i < params.warmup; i++) {
      await raw()
      await viaDsh()
    }
    const rawMs: number[] = []
    const dshMs: number[] = []
    // Interleaved, so a change of the machine's load falls on both alike.
    for (let i = 0; i < params.calls; i++) {
      rawMs.push(await raw())
      dshMs.push(await viaDsh())
    }
    const rawUs = median(rawMs) * 1000
    const dshUs = median(dshMs) * 1000
    return { rawUs, dshUs, overheadUs: dshUs - rawUs }
  } finally {
    await spine.dispose()
  }
}

export default defineScenario<Params>({
  id: 'mcp-call-overhead',
  title: '8. MCP call overhead',
  describe: (p) => `server-everything's echo over stdio: median of ${p.calls} ctx.tools.execute calls minus median of ${p.calls} raw Client.callTool calls on the same connection (interleaved, after ${p.warmup} of each)`,
  subjects: ['dsh'],
  metrics: [
    { key: 'rawUs', label: 'raw Client.callTool', unit: 'µs', digits: 0, compare: false },
    { key: 'dshUs', label: 'ctx.tools.execute', unit: 'µs', digits: 0, compare: false },
    { key: 'overheadUs', label: 'what dsh adds', unit: 'µs', digits: 0, compare: false, budget: { op: '<=', limit: 200, source: 'PLUGINS §9' } },
  ],
  params: (mode) => (mode === 'full' ? { calls: 1000, warmup: 200 } : { calls: 20, warmup: 5 }),
  runs: (mode) => (mode === 'full' ? 3 : 1),
  run: mcpCallOverhead,
})
