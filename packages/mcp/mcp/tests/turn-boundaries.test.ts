import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { LlmRequest } from '@deepseek-ai/dsh-llm'
import { deferred, settle } from '@deepseek-ai/dsh-testkit'
import { defineTool } from '@deepseek-ai/dsh-tools'
import type { McpAppliedChange, McpToolsChange } from '@deepseek-ai/dsh-mcp'
import { connected, mcpSpine, type McpSpine } from './helpers'
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

const WEB_TOOLS = ['mcp__web__add', 'mcp__web__hold', 'mcp__web__whoami']

function toolNames(request: LlmRequest): string[] {
  return (request.tools ?? []).map((tool) => tool.name)
}

/** The request headers the agent's log holds: why each was written and the tools it lists. */
function headers(agent: Agent): Array<{ reason: string; tools: string[] }> {
  return agent.session.events.flatMap((event) => (event.type === 'request/header' ? [{ reason: event.data.reason, tools: event.data.tools.map((tool) => tool.name) }] : []))
}

function recordApplied(kit: McpSpine): Array<Omit<McpAppliedChange, 'agent'>> {
  const seen: Array<Omit<McpAppliedChange, 'agent'>> = []
  kit.root.on('mcp/applied', ({ agent: _agent, ...change }) => void seen.push(change))
  return seen
}

function nextToolsChange(kit: McpSpine, reason: McpToolsChange['reason']): Promise<McpToolsChange> {
  return new Promise((resolve) => {
    const dispose = kit.root.on('mcp/tools', (change) => {
      if (change.reason !== reason) return
      dispose()
      resolve(change)
    })
  })
}

describe('tool-set changes land at the next turn boundary, never mid-turn (R-MCP-2, R-MCP-3)', () => {
  it('a list_changed during a turn reaches the next turn: one tool list per turn, one logged header change', async () => {
    const http = await httpServer()
    const kit = await mcpSpine(
      { servers: { web: { url: http.url } } },
      { model: { script: [{ toolCalls: [{ name: 'mcp__web__hold', arguments: { key: 'a' } }], answer: 'done' }, 'second turn'] } },
    )
    const applied = recordApplied(kit)
    await connected(kit, 'web')
    await http.streamOpen.promise
    const agent = await kit.agent()

    agent.followup('hold on')
    const held = await http.holdStarted.promise
    const relisted = nextToolsChange(kit, 'list-changed')
    http.addTool('late', 'late answer')
    expect(await relisted).toEqual({ server: 'web', tools: ['add', 'hold', 'late', 'whoami'], reason: 'list-changed' })
    held.release('released')
    await agent.whenIdle()
    agent.followup('again')
    await agent.whenIdle()

    const withLate = [...WEB_TOOLS, 'mcp__web__late'].sort()
    expect(kit.model.requests.map(toolNames)).toEqual([WEB_TOOLS, WEB_TOOLS, withLate])
    expect(headers(agent)).toEqual([
      { reason: 'initial', tools: WEB_TOOLS },
      { reason: 'change', tools: withLate },
    ])
    expect(applied).toEqual([
      { turn: 0, added: WEB_TOOLS, removed: [], changed: [] },
      { turn: 2, added: ['mcp__web__late'], removed: [], changed: [] },
    ])
  })

  it('the first request waits for the servers to connect (within startupTimeoutMs)', async () => {
    const http = await httpServer()
    const gate = deferred()
    http.gate = gate.promise
    const kit = await mcpSpine({ servers: { web: { url: http.url } }, startupTimeoutMs: 60_000 }, { model: { script: ['hello'] } })
    const agent = await kit.agent()
    expect(kit.mcp.toolNames(agent)).toEqual([])

    agent.followup('hi')
    await settle()
    await settle()
    expect(kit.model.requests).toHaveLength(0)
    gate.resolve()
    await agent.whenIdle()
    expect(kit.model.requests.map(toolNames)).toEqual([WEB_TOOLS])
  })

  it('a server that connects after the first request joins at the next turn, not within the turn it connected in', async () => {
    const http = await httpServer()
    const gate = deferred()
    http.gate = gate.promise
    const started = deferred()
    const released = deferred<string>()
    const wait = defineTool({
      name: 'wait',
      description: 'Waits for the test.',
      parameters: z.object({}),
      execute: async () => {
        started.resolve()
        return released.promise
      },
    })
    const kit = await mcpSpine(
      { servers: { web: { url: http.url } }, startupTimeoutMs: 1 },
      { tools: [wait], model: { script: [{ toolCalls: [{ name: 'wait', arguments: {} }], answer: 'done' }, 'second turn'] } },
    )
    const agent = await kit.agent()
    agent.followup('start')
    await started.promise
    // The server connects while the turn is in its tool call.
    gate.resolve()
    await connected(kit, 'web')
    released.resolve('waited')
    await agent.whenIdle()
    agent.followup('again')
    await agent.whenIdle()

    const withWeb = ['wait', ...WEB_TOOLS].sort()
    expect(kit.model.requests.map(toolNames)).toEqual([['wait'], ['wait'], withWeb])
    expect(headers(agent)).toEqual([
      { reason: 'initial', tools: ['wait'] },
      { reason: 'change', tools: withWeb },
    ])
  })
})
