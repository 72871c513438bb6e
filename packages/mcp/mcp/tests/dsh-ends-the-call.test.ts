import { describe, expect, it } from 'vitest'
import { connected, everything, execute, mcpSpine, type McpSpine } from './helpers'

/** A long-running call of server-everything's, and a hook that runs `end` right after its request left. */
async function callEndedBy(end: (kit: McpSpine) => unknown) {
  const kit = await mcpSpine({ servers: { everything: everything() } })
  await connected(kit, 'everything')
  // Ended right after the call's request left (the body runs synchronously up to its send).
  let ended: unknown
  kit.root.on('tools/execute', (dispatch, next) => {
    const running = next()
    if (dispatch.call.name.endsWith('long-running-operation')) ended = end(kit)
    return running
  })
  const agent = await kit.agent()
  const running = execute(kit, agent, 'mcp__everything__trigger-long-running-operation', { duration: 600, steps: 1 })
  const result = await running
  await ended
  return result.error
}

// A call in flight when dsh itself drops the connection (a restart asked for, the plugin unloading) must
// not read as the server failing: the model would be told the server crashed and might retry elsewhere.
describe('a call ended by dsh, not by the server', () => {
  it('restart() during a call: the error says dsh restarted the server', { timeout: 120_000 }, async () => {
    expect(await callEndedBy((kit) => kit.mcp.restart('everything'))).toEqual({
      code: 'SERVER_UNAVAILABLE',
      message: 'dsh restarted the MCP server "everything" during the call (restart() was asked for); whether the tool did anything is unknown',
    })
  })

  it('unloading dsh-mcp during a call: the error says dsh closed the connection', { timeout: 120_000 }, async () => {
    expect(await callEndedBy((kit) => kit.fiber.dispose())).toEqual({
      code: 'SERVER_UNAVAILABLE',
      message: 'dsh closed its connection to the MCP server "everything" during the call (dsh-mcp or the server\'s owner is unloading); whether the tool did anything is unknown',
    })
  })
})
