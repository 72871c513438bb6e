import { describe, expect, it } from 'vitest'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { MemorySessionPersistence, SessionId, memoryPersistence } from '@deepseek-ai/dsh-session'
import { trace, transcript } from '@deepseek-ai/dsh-testkit'
import { connected, everything, mcpSpine, stateOf } from './helpers'

const agentOptions = { provider: 'scripted', model: 'test-model' }

function headers(agent: Agent): Array<{ reason: string; tools: number }> {
  return agent.session.events.flatMap((event) => (event.type === 'request/header' ? [{ reason: event.data.reason, tools: event.data.tools.length }] : []))
}

describe('a session that used MCP tools resumes when the server is gone (R-MCP-3)', () => {
  it('the history keeps the old calls, the tool list drops the server, and a call to its tool is an error result', async () => {
    const backend = new MemorySessionPersistence()
    const first = await mcpSpine(
      { servers: { everything: everything() } },
      { model: { script: [{ toolCalls: [{ name: 'mcp__everything__echo', arguments: { message: 'hi' } }], answer: 'It said hi.' }] } },
    )
    await first.root.plugin(memoryPersistence, { backend })
    await connected(first, 'everything')
    const handle = await first.root.agents.create({ sessionId: SessionId('s'), agentOptions })
    handle.agent.followup('echo hi')
    await handle.agent.whenIdle()
    await handle.dispose()

    // A new process whose config still names the server, but it cannot start any more.
    const second = await mcpSpine(
      { servers: { everything: { command: '/nonexistent/server-everything' } } },
      { model: { script: [{ toolCalls: [{ name: 'mcp__everything__echo', arguments: { message: 'again' } }], answer: 'The tool is gone.' }] } },
    )
    await second.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const resumed = await second.root.agents.resume({ resumeSessionId: SessionId('s'), agentOptions })
    second.handles.push(resumed)
    const agent = resumed.agent
    agent.followup('echo again')
    await agent.whenIdle()

    expect(trace(agent.session).filter((line) => line.startsWith('tool/') || line.startsWith('turn/end'))).toEqual([
      'tool/call mcp__everything__echo',
      'tool/result ok "Echo: hi"',
      'turn/end 1 completed',
      'tool/call mcp__everything__echo',
      'tool/result UNKNOWN_TOOL "Error: unknown tool \\"mcp__everything__echo\\""',
      'turn/end 2 completed',
    ])
    // The first request after the resume: the old call and its result are history; no MCP tool is offered.
    const request = second.model.requests[0]!
    expect(request.tools).toEqual([])
    expect(transcript(request.messages)).toEqual([
      'user: echo hi',
      'assistant: call mcp__everything__echo({"message":"hi"})',
      'user: result Echo: hi',
      'assistant: It said hi.',
      'user: echo again',
    ])
    expect(headers(agent)).toEqual([
      { reason: 'initial', tools: 12 },
      { reason: 'resume', tools: 0 },
    ])
    expect((await stateOf(second, 'everything', (status) => status.state === 'failed')).error).toBe('could not connect: spawn /nonexistent/server-everything ENOENT')
  })
})
