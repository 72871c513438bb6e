import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { processesWith } from '@deepseek-ai/dsh-testkit'
import { runDemo, sessionFiles, startDemo, tempDir, workspace } from './helpers'

/** A workspace whose scripted model plays `script` (one entry per model call, parent and children alike), and a home of its own. */
function setup(script: unknown[]) {
  const cwd = workspace()
  writeFileSync(join(cwd, 'dsh.config.json'), JSON.stringify({ scripted: { script } }))
  return { cwd, data: tempDir(), env: { HOME: tempDir('dsh-home-') } }
}

// Each test drives a real `dsh-demo` process; one after another, so a loaded machine does not starve them.
describe('dsh-demo: subagents and background tasks (issue 21)', { timeout: 240_000 }, () => {
  it("-p: the explore subagent's activity is shown under the task call, its answer is the result, and its session is linked to the parent's", async () => {
    const { cwd, data, env } = setup([
      { toolCalls: [{ name: 'task', arguments: { description: 'find add', prompt: 'Where is add defined?', agentType: 'explore' } }] },
      { toolCalls: [{ name: 'grep', arguments: { pattern: 'const add' } }] },
      'add is defined in src/add.ts, line 1.',
      'The explorer says: src/add.ts.',
    ])
    const { status, stdout, stderr } = await runDemo(['-p', 'where is add?', '--data-dir', data], { cwd, env })
    expect({ status, stdout }).toEqual({ status: 0, stdout: 'The explorer says: src/add.ts.\n' })
    const lines = stderr.split('\n')
    const at = lines.findIndex((line) => line.startsWith('  ↳ explore subagent: find add'))
    expect(at).toBeGreaterThanOrEqual(0)
    expect(lines.slice(at, at + 3)).toEqual([
      '  ↳ explore subagent: find add',
      '    ↳ explore: grep {"pattern":"const add"}',
      '  ↳ explore answered · 2 model calls',
    ])
    const sessions = sessionFiles(data)
    const [parentId, parent] = Object.entries(sessions).find(([, events]) => events[0]!.data && !(events[0]!.data as { parentSession?: string }).parentSession)!
    const started = parent.find((event) => event.type === 'subagent/started')!.data as { sessionId: string; agentType: string }
    expect(started.agentType).toBe('explore')
    expect((sessions[started.sessionId]![0]!.data as { parentSession: string }).parentSession).toBe(parentId)
  })

  it('/tasks lists a background shell command and /tasks stop stops it (its process ends); the model is told without a turn', async () => {
    const { cwd, data, env } = setup([{ toolCalls: [{ name: 'shell', arguments: { command: 'echo up > server.pid; exec sleep 987654', background: true } }] }, 'Started it.'])
    const demo = startDemo(['--data-dir', data, '--mode', 'bypass'], { cwd, env })
    await demo.waitFor(/^> /m)
    demo.write('start the server\n')
    // (turn 1 is the injected notice of the bypass mode)
    await demo.waitFor(/^Started it\.$/m)
    await demo.waitFor(/· turn \d+ done/)
    await vi.waitFor(() => expect(processesWith('987654')).not.toEqual([]), { timeout: 120_000, interval: 20 })
    demo.write('/tasks\n')
    await demo.waitFor(/^ {2}task-1 {2}running {2}shell: echo up > server\.pid; exec sleep 987654 {2}\(\d+ s\)$/m)
    demo.write('/tasks stop task-1\n')
    await demo.waitFor(/^stopping task-1; the model is told without starting a turn$/m)
    await vi.waitFor(() => expect(processesWith('987654')).toEqual([]), { timeout: 120_000, interval: 50 })
    // The task ends once the command is reaped (after the kill grace, in a sandbox): ask until /tasks shows it cancelled.
    let asked = 1
    await vi.waitFor(
      async () => {
        demo.write('/tasks\n')
        await demo.waitFor(/^stop one with \/tasks stop <id>, all with \/tasks stop$/m, ++asked)
        expect(demo.stdout()).toMatch(/^ {2}task-1 {2}cancelled {2}shell: /m)
      },
      { timeout: 120_000, interval: 250 },
    )
    expect(demo.stdout()).toMatch(/^ {2}task-1 {2}cancelled {2}shell: /m)
    demo.end()
    expect(await demo.exited).toBe(0)
    const [events] = Object.values(sessionFiles(data))
    // No model call after the stop: the two of the script (the shell call, "Started it.").
    expect(events!.filter((event) => event.type === 'assistant/message')).toHaveLength(2)
    expect(events!.filter((event) => event.type === 'task/delivered').map((event) => event.data)).toEqual([
      { id: 'task-1', status: 'cancelled', via: 'inject', messageId: expect.any(String) },
    ])
  })
})
