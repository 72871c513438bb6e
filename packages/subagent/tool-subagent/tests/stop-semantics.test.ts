import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AgentCancelCause } from '@deepseek-ai/dsh-agent'
import type { AnySessionEvent, SessionId } from '@deepseek-ai/dsh-session'
import { alive, trace } from '@deepseek-ai/dsh-testkit'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { Gates, harness, look, records, taskCall, toolResults, waitTool, type Harness } from './helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})
const directories: string[] = []
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true })
})

const waiter = { name: 'waiter', description: 'Waits.', systemPrompt: 'You wait.', tools: ['wait', 'look'] }
const sheller = { name: 'sheller', description: 'Runs commands.', systemPrompt: 'You run commands.', tools: ['shell'] }

/** The session ids of the children a parent's log started, in order. */
function children(h: Harness, parent: { session: { events: readonly { type: string; data: unknown }[] } }): SessionId[] {
  return parent.session.events.filter((event) => event.type === 'subagent/started').map((event) => (event.data as { sessionId: SessionId }).sessionId)
}

/** The last four events of a log, with what matters of each. */
function tail(events: readonly AnySessionEvent[]): string[] {
  return events.slice(-4).map((event) => {
    if (event.type === 'turn/end') return `turn/end ${event.data.reason.kind}`
    if (event.type === 'tool/result') return `tool/result ${event.data.error?.code ?? 'ok'}`
    if (event.type === 'tool/call') return `tool/call ${event.data.name}`
    return event.type
  })
}

async function pidIn(file: string): Promise<number> {
  let pid = 0
  await vi.waitFor(() => {
    pid = Number(readFileSync(file, 'utf8').trim())
    expect(pid).toBeGreaterThan(0)
  }, { timeout: 40_000, interval: 20 })
  return pid
}

describe('stop semantics (R-TSK-1a, R-SUB-4)', () => {
  it("a person's cancel of the parent's turn cancels that turn's foreground child (cause parent, its calls answered); a background child keeps running and is delivered later", async () => {
    const gates = new Gates()
    const causes: string[] = []
    h = await harness({
      types: [waiter],
      tools: [look, waitTool(gates)],
      respond: (request, who) => {
        if (who === 'Wait here.') return { toolCalls: [{ name: 'wait', arguments: { key: 'child-wait' } }] }
        if (who === 'Wait behind.') return gates.hold('behind', request)
        if (request.messages.length === 1) {
          return {
            toolCalls: [
              taskCall({ description: 'behind', prompt: 'Wait behind.', background: true }).toolCalls![0]!,
              taskCall({ description: 'here', prompt: 'Wait here.' }).toolCalls![0]!,
            ],
          }
        }
        return 'Noted the background answer.'
      },
    })
    const parent = await h.agent()
    h.root.on('agent/cancel-requested', (agent, cause: AgentCancelCause) => void causes.push(`${agent.id === parent.id ? 'parent' : 'child'} ${cause.kind}`))
    parent.followup('Start two.')
    await gates.reached('child-wait')
    await gates.reached('behind')
    parent.cancel({ kind: 'user' })
    await parent.whenIdle()
    expect(causes).toEqual(['parent user', 'child parent'])
    expect(toolResults(parent.session)).toEqual([
      expect.stringMatching(/^ok: Started background task task-1 /),
      'ABORTED: Error: tool call aborted',
    ])
    const [behind, here] = children(h, parent)
    // The foreground child is gone; its turn ended aborted with its call answered.
    expect(h.root.agents.get(here!)).toBeUndefined()
    const log = await h.root.sessionPersistence.load(here!)
    expect(tail(log.events)).toEqual(['tool/call wait', 'tool/result ABORTED', 'step/end', 'turn/end aborted'])
    expect(h.root.agents.get(behind!)?.status).toBe('running')
    expect(h.root.tasks.get('task-1')!.status).toBe('running')

    gates.open('behind', 'Waited behind.')
    await h.root.tasks.get('task-1')!.result()
    await parent.whenIdle()
    expect(records(parent.session, 'task/')).toEqual([
      { type: 'task/started', id: 'task-1', kind: 'subagent', title: 'waiter "behind"', callId: 'call_0_0' },
      { type: 'task/delivered', id: 'task-1', status: 'completed', via: 'steer', messageId: 'm' },
    ])
    expect(trace(parent.session).slice(-3)).toEqual(['assistant/message "Noted the background answer." stop', 'step/end 2.1', 'turn/end 2 completed'])
    await h.expectClean()
  })
})

describe('stop semantics, continued (R-TSK-1, R-TSK-1a, R-SUB-1)', () => {
  it('disposing the parent with children running stops them all: none outlives it, and nothing is delivered', async () => {
    const gates = new Gates()
    h = await harness({
      types: [waiter],
      tools: [look, waitTool(gates)],
      respond: (request, who) => {
        if (who !== 'parent') return gates.hold(who, request)
        return {
          toolCalls: [
            taskCall({ description: 'behind', prompt: 'Wait behind.', background: true }).toolCalls![0]!,
            taskCall({ description: 'here', prompt: 'Wait here.' }).toolCalls![0]!,
          ],
        }
      },
    })
    const parent = await h.agent()
    const ended: string[] = []
    h.root.on('tasks/cancelled', ({ task, result }) => void ended.push(`${task.id} ${result.stoppedBy}`))
    parent.followup('Start two.')
    await gates.reached('Wait behind.')
    await gates.reached('Wait here.')
    const ids = children(h, parent)
    expect(ids.map((id) => h!.root.agents.get(id)?.status)).toEqual(['running', 'running'])
    await h.handles.splice(0)[0]!.dispose()
    expect(ids.map((id) => h!.root.agents.get(id))).toEqual([undefined, undefined])
    await h.root.tasks.get('task-1')?.result()
    expect(ended).toEqual(['task-1 owner-disposed'])
    for (const id of ids) expect(tail((await h.root.sessionPersistence.load(id)).events).at(-1)).toBe('turn/end aborted')
    expect(records(parent.session, 'task/')).toEqual([{ type: 'task/started', id: 'task-1', kind: 'subagent', title: 'waiter "behind"', callId: 'call_0_0' }])
    expect(h.root.subagents.list()).toEqual([])
    await h.expectClean()
  })

  it('a task stopped by the person is reported to the model without starting a turn', async () => {
    const gates = new Gates()
    h = await harness({
      types: [waiter],
      tools: [look, waitTool(gates)],
      respond: (request, who) => {
        if (who !== 'parent') return gates.hold(who, request)
        return request.messages.length === 1 ? taskCall({ description: 'behind', prompt: 'Wait behind.', background: true }) : 'Started.'
      },
    })
    const parent = await h.agent()
    parent.followup('Start one.')
    await parent.whenIdle()
    await gates.reached('Wait behind.')
    const calls = h.model.calls
    expect(h.root.tasks.get('task-1')!.cancel()).toBe(true)
    await h.root.tasks.get('task-1')!.result()
    await parent.whenIdle()
    expect(h.model.calls).toBe(calls)
    expect(parent.status).toBe('idle')
    expect(trace(parent.session).slice(-5)).toEqual([
      'subagent/finished',
      'turn/start 2 injection',
      'user/message "[Background task task-1 was stopped by the person] subagent: waiter \\"behind\\""',
      'turn/end 2 completed',
      'task/delivered',
    ])
    expect(records(parent.session, 'task/').at(-1)).toEqual({ type: 'task/delivered', id: 'task-1', status: 'cancelled', via: 'inject', messageId: 'm' })
    await h.expectClean()
  })

  for (const ending of ['answers', 'is cancelled'] as const) {
    // A real shell and server process start and are stopped here: a ceiling for a loaded machine.
    it(`a child's own background shell ends with the child when it ${ending}`, { timeout: 120_000 }, async () => {
      const directory = mkdtempSync(join(tmpdir(), 'dsh-subagent-shell-'))
      directories.push(directory)
      const gates = new Gates()
      h = await harness({
        types: [sheller],
        workspace: directory,
        respond: (request, who) => {
          if (who === 'parent') return request.messages.length === 1 ? taskCall({ description: 'serve', prompt: 'Serve.', agentType: 'sheller' }) : 'Served.'
          if (request.messages.length === 1) return { toolCalls: [{ name: 'shell', arguments: { command: 'echo $$ > server.pid; exec sleep 1000', background: true } }] }
          // The child waits, once its server wrote its pid, until the test has seen the server alive:
          // answering at once would let the child end (and stop the server) before the test looks.
          return pidIn(join(directory, 'server.pid')).then(() => gates.hold('child', request))
        },
      })
      const parent = await h.agent()
      parent.followup('Serve.')
      const pid = await pidIn(join(directory, 'server.pid'))
      await gates.reached('child')
      expect(alive(pid)).toBe(true)
      if (ending === 'answers') gates.open('child', 'Started the server.')
      else parent.cancel({ kind: 'user' })
      await parent.whenIdle()
      const [child] = children(h, parent)
      expect(h.root.agents.get(child!)).toBeUndefined()
      await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 40_000, interval: 20 })
      const log = await h.root.sessionPersistence.load(child!)
      expect(log.events.filter((event) => event.type === 'task/started').map((event) => (event.data as { kind: string }).kind)).toEqual(['shell'])
      await h.expectClean()
    })
  }
})
