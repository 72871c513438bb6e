import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CliError } from '../src/cli/errors'
import { resolveSettings } from '../src/cli/settings'
import { startDemo, tempDir, workspace } from './helpers'

const require = createRequire(import.meta.url)

/** server-everything's bin, run with this Node. */
function everythingBin(): string {
  const manifest = require.resolve('@modelcontextprotocol/server-everything/package.json')
  return join(dirname(manifest), Object.values((require(manifest) as { bin: Record<string, string> }).bin)[0]!)
}

function mcpFile(dir: string): string {
  const file = join(dir, 'mcp.json')
  const mcpServers = {
    everything: { command: process.execPath, args: [everythingBin(), 'stdio'] },
    ghost: { command: '/nonexistent/dsh-demo-ghost' },
  }
  writeFileSync(file, JSON.stringify({ mcpServers }))
  return file
}

describe('dsh-demo --mcp-config (dsh-mcp)', () => {
  it('reads the mcpServers file from the flag, or from mcpConfig in the config file (relative to it)', async () => {
    const dir = tempDir()
    mcpFile(dir)
    const flagged = await resolveSettings(['--mcp-config', 'mcp.json'], {}, dir)
    const fromFile = await resolveSettings([], {}, (writeFileSync(join(dir, 'dsh.config.json'), '{ "mcpConfig": "mcp.json" }'), dir))
    for (const resolved of [flagged, fromFile]) {
      if (resolved === 'help') throw new Error('unexpected help')
      expect(Object.keys(resolved.mcpServers ?? {})).toEqual(['everything', 'ghost'])
    }
  })

  it('names the file it cannot read', async () => {
    const dir = tempDir()
    const error = await resolveSettings(['--mcp-config', 'missing.json'], {}, dir).catch((reason: unknown) => reason)
    expect(error).toBeInstanceOf(CliError)
    expect(error).toMatchObject({ code: 'INVALID_ARGS', message: `--mcp-config: cannot read the MCP config file ${join(dir, 'missing.json')} (ENOENT)` })
  })

  it('/mcp lists the servers, their state and tools; a server that cannot start does not stop the agent', { timeout: 240_000 }, async () => {
    const cwd = workspace()
    const data = tempDir()
    const demo = startDemo(['--data-dir', data, '--mcp-config', mcpFile(tempDir())], { cwd })
    await demo.waitFor(/^> /m)
    demo.write('hello\n')
    await demo.waitFor(/· turn 1 done/)
    // The servers connect in the background: ask until both have settled (a generous ceiling, no sleep).
    for (let asked = 1; asked <= 40; asked++) {
      demo.write('/mcp\n')
      await demo.waitFor(/^the agent has .*$/m, asked)
      if (/ {2}everything {2}connected/.test(demo.stdout()) && / {2}ghost {2}restarting · stdio · could not connect/.test(demo.stdout())) break
    }
    demo.end()
    expect(await demo.exited).toBe(0)
    const lines = demo.stdout().split('\n')
    const last = lines.lastIndexOf('MCP servers (2):')
    expect(lines.slice(last, last + 4)).toEqual([
      'MCP servers (2):',
      expect.stringMatching(/^ {2}everything {2}connected · stdio · pid \d+ · 12 tools: echo, get-annotated-message, get-env, .*, trigger-long-running-operation$/),
      // Retried with backoff (1 s, 2 s, 4 s, …) until 8 attempts failed.
      expect.stringMatching(/^ {2}ghost {2}restarting · stdio · could not connect: spawn \/nonexistent\/dsh-demo-ghost ENOENT · next attempt in \d+ s · \d failed attempts?$/),
      expect.stringMatching(/^the agent has (no MCP tools yet; tools of servers that connect reach it at its next turn|12 MCP tools; changes reach it at its next turn)$/),
    ])
  })
})
