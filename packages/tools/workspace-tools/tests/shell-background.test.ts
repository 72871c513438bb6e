import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Agent, AgentHandle } from '@deepseek-ai/dsh-agent'
import AgentSpine from '@deepseek-ai/dsh-agent-spine'
import type { Message } from '@deepseek-ai/dsh-llm'
import { ScriptedModel, type ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import { SessionId } from '@deepseek-ai/dsh-session'
import Tasks from '@deepseek-ai/dsh-tasks'
import { trace } from '@deepseek-ai/dsh-testkit'
import WorkspaceTools from '@deepseek-ai/dsh-workspace-tools'
import { Context } from 'cordis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { alive, tempDir } from './helpers'

const text = (message: Message) => message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')

/** The pid a command wrote to `file` in the workspace, once it is there. */
async function pidFrom(root: string, file: string): Promise<number> {
  let pid = 0
  await vi.waitFor(
    () => {
      pid = Number(readFileSync(join(root, file), 'utf8').trim())
      expect(pid).toBeGreaterThan(0)
    },
    { timeout: 20_000, interval: 20 },
  )
  return pid
}

let teardown: (() => Promise<void>) | undefined
afterEach(async () => {
  await teardown?.()
  teardown = undefined
})

/**
 * The spine bundle with a scripted model, the workspace tools on `root`
 * (unconfined, nothing asks) and, unless `tasks: false`, dsh-tasks. The model
 * runs `command` in the background for the first prompt and answers `ok`
 * to anything else.
 */
async function app(root: string, command: string, options: { tasks?: boolean } = {}) {
  const ctx = new Context()
  const spine = ctx.plugin(AgentSpine, {
    agents: [],
    systemPrompt: { identity: 'You are a test agent.', persona: '' },
    invariants: { policy: 'throw' },
    retry: { baseDelayMs: 0, maxDelayMs: 0 },
  })
  await spine
  const model = new ScriptedModel({
    respond: (request): string | ScriptReply =>
      request.messages.length === 1 ? { toolCalls: [{ name: 'shell', arguments: { command, background: true } }] } : text(request.messages.at(-1)!).startsWith('[Background') ? 'Seen.' : 'ok',
  })
  ctx.llm.registerAdapter(['scripted'], model)
  const tools = ctx.plugin(WorkspaceTools, { root, askBefore: [], shell: { sandbox: 'off' } })
  await tools
  const tasks = options.tasks === false ? undefined : ctx.plugin(Tasks)
  await tasks
  const handles: AgentHandle[] = []
  teardown = async () => {
    for (const handle of handles) await handle.dispose()
    await tasks?.dispose()
    await tools.dispose()
    await spine.dispose()
  }
  return {
    ctx,
    model,
    tasks,
    handles,
    async agent(): Promise<Agent> {
      const handle = await ctx.agents.create({ sessionId: SessionId('a'), agentOptions: { provider: 'scripted', model: 'test-model' } })
      handles.push(handle)
      return handle.agent
    },
  }
}

const started =
  'Started background task task-1: the command runs in the background. Its output and exit code will come to you as a message when it ends; carry on meanwhile, and do not wait or poll for it.'

describe('shell: the background mode through ctx.tasks (R-TSK-2, issue 21)', () => {
  it('returns a task id at once; the output and exit code reach the idle agent later, as a steering turn', async () => {
    const root = tempDir()
    const a = await app(root, 'echo begun; while [ ! -e go ]; do sleep 0.05; done; echo finished; exit 3')
    const agent = await a.agent()
    expect(JSON.stringify(a.ctx.tools.schemas().find((schema) => schema.name === 'shell')!.parameters)).toContain('"background"')
    agent.followup('Run it in the background.')
    await agent.whenIdle()
    const task = a.ctx.tasks.get('task-1')!
    expect(task.status).toBe('running')
    await vi.waitFor(() => expect(task.output()).toBe('begun\n'), { timeout: 20_000, interval: 20 })
    expect(a.ctx.workspaceTools.describe({ tool: a.ctx.tools.definition('shell')!, args: { command: 'make', background: true } })).toMatch(/^run "make" in the workspace, in the background\. /)

    writeFileSync(join(root, 'go'), '')
    await task.result()
    await agent.whenIdle()
    const notice = '[Background task task-1 completed] shell: echo begun; while [ ! -e go ]; do sleep 0.05; done; echo finished; exit 3\nbegun\nfinished\n[exit code 3]'
    expect(trace(agent.session).filter((line) => /^(tool\/result|task\/|steering\/message|turn\/start|turn\/end)/.test(line))).toEqual([
      'turn/start 1 prompt',
      'task/started',
      `tool/result ok ${JSON.stringify(started)}`,
      'turn/end 1 completed',
      'task/delivered',
      'turn/start 2 steering',
      `steering/message ${JSON.stringify(notice)}`,
      'turn/end 2 completed',
    ])
    expect(agent.session.events.find((event) => event.type === 'task/started')!.data).toEqual({
      id: 'task-1',
      kind: 'shell',
      title: 'echo begun; while [ ! -e go ]; do sleep 0.05; done; echo finished; exit 3',
      callId: 'call_0_0',
    })
  })

  it("a person's stop kills the command's whole process group; the agent is told without a turn", async () => {
    const root = tempDir()
    const a = await app(root, 'echo $$ > shell.pid; sleep 1000 & echo $! > child.pid; echo up; wait')
    const agent = await a.agent()
    agent.followup('Start it.')
    await agent.whenIdle()
    const pids = [await pidFrom(root, 'shell.pid'), await pidFrom(root, 'child.pid')]
    expect(pids.map(alive)).toEqual([true, true])
    const calls = a.model.calls
    const task = a.ctx.tasks.get('task-1')!
    expect(task.cancel()).toBe(true)
    expect(await task.result()).toMatchObject({ status: 'cancelled', stoppedBy: 'person', output: 'up\n[cancelled: the command and every process it started were stopped]' })
    await vi.waitFor(() => expect(pids.map(alive)).toEqual([false, false]), { timeout: 20_000, interval: 50 })
    await agent.whenIdle()
    expect(a.model.calls).toBe(calls)
  })

  it("disposing the agent kills the command's process group before the disposal resolves", async () => {
    const root = tempDir()
    const a = await app(root, 'echo $$ > shell.pid; sleep 1000 & echo $! > child.pid; wait')
    const agent = await a.agent()
    agent.followup('Start it.')
    await agent.whenIdle()
    const pids = [await pidFrom(root, 'shell.pid'), await pidFrom(root, 'child.pid')]
    await a.handles.splice(0)[0]!.dispose()
    // The process group was signalled and the shell reaped before dispose() resolved; the grandchild
    // (re-parented once the shell is gone) may take a moment to be reaped by init.
    expect(alive(pids[0]!)).toBe(false)
    await vi.waitFor(() => expect(alive(pids[1]!)).toBe(false), { timeout: 20_000, interval: 50 })
    expect(a.ctx.tasks.list()).toEqual([])
  })

  it('without ctx.tasks the shell has no background parameter; it gets one when dsh-tasks is mounted, and loses it when it goes', async () => {
    const root = tempDir()
    const a = await app(root, 'true', { tasks: false })
    const parameters = () => JSON.stringify(a.ctx.tools.schemas().find((schema) => schema.name === 'shell')!.parameters)
    expect(parameters()).not.toContain('"background"')
    expect(a.ctx.tools.schemas().find((schema) => schema.name === 'shell')!.description).toContain('there is no background mode')
    const tasks = a.ctx.plugin(Tasks)
    await tasks
    expect(parameters()).toContain('"background"')
    await tasks.dispose()
    expect(parameters()).not.toContain('"background"')
    expect(a.ctx.tools.schemas().filter((schema) => schema.name === 'shell')).toHaveLength(1)
  })
})
