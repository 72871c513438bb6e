import { afterEach, describe, expect, it, vi } from 'vitest'
import { trace } from '@deepseek-ai/dsh-testkit'
import { connected, everything, execute, mcpSpine, resultText } from './helpers'
import { TestHttpServer } from './http-server'

const servers: TestHttpServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop()
})

async function httpServer(): Promise<TestHttpServer> {
  const server = await TestHttpServer.start()
  servers.push(server)
  return server
}

describe('a cancelled call sends the protocol cancellation; a call past its deadline is TIMEOUT (R-MCP-2)', () => {
  it('aborting a call mid-way sends notifications/cancelled: the server stops, the model reads ABORTED', async () => {
    const http = await httpServer()
    const kit = await mcpSpine({ servers: { web: { url: http.url } } })
    await connected(kit, 'web')
    const agent = await kit.agent()
    const controller = new AbortController()
    const call = execute(kit, agent, 'mcp__web__hold', { key: 'k' }, controller.signal)
    const held = await http.holdStarted.promise
    controller.abort(new Error('the person pressed Ctrl-C'))
    expect((await call).error).toEqual({ code: 'ABORTED', message: 'tool call aborted' })
    // The server's handler saw the cancellation, with the reason.
    expect(await held.cancelled).toBe('Error: the person pressed Ctrl-C')
    expect(http.requests).toContain('POST notifications/cancelled')
    // The connection is still good.
    expect(resultText(await execute(kit, agent, 'mcp__web__add', { a: 20, b: 22 }))).toBe('42')
  })

  it('cancelling a turn during an MCP call cancels the call on the server', async () => {
    const http = await httpServer()
    const kit = await mcpSpine({ servers: { web: { url: http.url } } }, { model: { script: [{ toolCalls: [{ name: 'mcp__web__hold', arguments: { key: 't' } }], answer: 'never' }] } })
    await connected(kit, 'web')
    const agent = await kit.agent()
    agent.followup('hold')
    const held = await http.holdStarted.promise
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    expect(await held.cancelled).toMatch(/abort|cancel/i)
    expect(trace(agent.session).filter((line) => line.startsWith('tool/result') || line.startsWith('turn/end'))).toEqual([
      'tool/result ABORTED "Error: tool call aborted"',
      'turn/end 1 aborted',
    ])
  })

  it('a call past its server timeoutMs is TIMEOUT (and cancelled on the server); the next call works', async () => {
    const kit = await mcpSpine({ servers: { everything: everything({ timeoutMs: 300 }) } })
    await connected(kit, 'everything')
    const agent = await kit.agent()
    expect(kit.root.tools.definition('mcp__everything__echo', agent)?.timeoutMs).toBe(300)
    // The deadline's timer is the test's: with a real 300 ms one, the echo below (a round trip to a
    // child process, under the same deadline) timed out whenever a loaded machine held the server
    // back that long. The call's timer is armed when its body returns its promise, synchronously
    // inside execute().
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      let settled = false
      const slow = execute(kit, agent, 'mcp__everything__trigger-long-running-operation', { duration: 600, steps: 1 })
      void slow.finally(() => (settled = true))
      await vi.advanceTimersByTimeAsync(299)
      expect(settled).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      expect((await slow).error).toEqual({ code: 'TIMEOUT', message: 'tool timed out after 300 ms' })
      expect(resultText(await execute(kit, agent, 'mcp__everything__echo', { message: 'still here' }))).toBe('Echo: still here')
    } finally {
      vi.useRealTimers()
    }
  })

  it('toolTimeoutMs is the deadline of every server that sets none', async () => {
    const http = await httpServer()
    const kit = await mcpSpine({ servers: { web: { url: http.url } }, toolTimeoutMs: 200 })
    await connected(kit, 'web')
    const agent = await kit.agent()
    const result = await execute(kit, agent, 'mcp__web__hold', { key: 'forever' })
    expect(result.error).toEqual({ code: 'TIMEOUT', message: 'tool timed out after 200 ms' })
  })
})
