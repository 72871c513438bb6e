import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { connected, execute, mcpSpine, resultText, stateOf } from './helpers'

const server = { command: process.execPath, args: [fileURLToPath(new URL('./fixtures/big-answer-server.mjs', import.meta.url))] }

describe('an answer larger than the client reads in one message', () => {
  it('the call and the status say so (not that the process exited), and the server comes back', async () => {
    const kit = await mcpSpine({ servers: { big: server } })
    await connected(kit, 'big')
    const agent = await kit.agent()
    const why = 'a message it sent was larger than the 10 MiB the MCP client reads at once (a tool answer that large must be asked for in parts), so the connection was dropped'
    const dropped = stateOf(kit, 'big', (status) => status.state === 'restarting')

    const result = await execute(kit, agent, 'mcp__big__big', {})
    expect(result.error).toEqual({ code: 'SERVER_UNAVAILABLE', message: `the MCP server "big" went away during the call (${why}); whether the tool did anything is unknown` })
    expect((await dropped).error).toBe(why)

    // Restarted: the next call goes through.
    await connected(kit, 'big')
    expect(resultText(await execute(kit, agent, 'mcp__big__small', {}))).toBe('ok')
  })
})
