import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { trace } from '@deepseek-ai/dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { harness, records, toolResults } from './helpers'

const repository = fileURLToPath(new URL('../../../..', import.meta.url))
const parentProcess = fileURLToPath(new URL('./fixtures/crash-parent.ts', import.meta.url))
const directories: string[] = []
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true })
})

describe('a real process killed while its children work (R-SUB-4, R-TSK-2)', () => {
  it('SIGKILL mid-child: the resumed parent has its foreground call answered INTERRUPTED, its background task delivered once as interrupted, both runs closed; the child session resumes repaired', { timeout: 60_000 }, async () => {
    const directory = mkdtempSync(join(tmpdir(), 'dsh-subagent-crash-'))
    directories.push(directory)
    const child = spawn(process.execPath, ['--conditions=dsh-source', '--import', 'tsx', parentProcess, directory], { cwd: repository, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (data: Buffer) => void (stderr += data.toString()))
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)))
    for await (const line of createInterface({ input: child.stdout })) {
      if (line === 'READY') {
        child.kill('SIGKILL')
        break
      }
    }
    expect({ exit: await exited, stderr }).toEqual({ exit: 'SIGKILL', stderr: '' })

    const h = await harness({ jsonl: directory, respond: () => 'I will start them again.' })
    try {
      const parent = await h.resume('p')
      await parent.whenIdle()
      expect(h.model.calls).toBe(0)
      expect(toolResults(parent.session)).toEqual([expect.stringMatching(/^ok: Started background task task-1 /), expect.stringMatching(/^INTERRUPTED: /)])
      expect(records(parent.session, 'task/')).toEqual([
        { type: 'task/started', id: 'task-1', kind: 'subagent', title: 'explore "behind"', callId: 'call_0_0' },
        { type: 'task/delivered', id: 'task-1', status: 'interrupted', via: 'inject', messageId: 'm' },
      ])
      expect(records(parent.session, 'subagent/')).toEqual([
        { type: 'subagent/started', runId: '#1', sessionId: 'p-sub-*', agentType: 'explore', description: 'behind', background: true, callId: 'call_0_0' },
        { type: 'subagent/started', runId: '#2', sessionId: 'p-sub-*', agentType: 'explore', description: 'here', background: false, callId: 'call_0_1' },
        { type: 'subagent/finished', runId: '#1', status: 'interrupted' },
        { type: 'subagent/finished', runId: '#2', status: 'interrupted' },
      ])
      // The next request tells the model both: the interrupted call and the interrupted task.
      parent.followup('What happened?')
      await parent.whenIdle()
      const last = JSON.stringify(h.model.requests.at(-1)!.messages)
      expect(last).toContain('[Background task task-1 was interrupted] subagent: explore \\"behind\\"')

      // Each child's transcript is on disk and resumes with its open turn closed by crash repair.
      const ids = parent.session.events.filter((event) => event.type === 'subagent/started').map((event) => (event.data as { sessionId: string }).sessionId)
      for (const id of ids) {
        const resumed = await h.resume(id)
        expect(resumed.session.meta.parentSession).toBe('p')
        expect(trace(resumed.session).filter((line) => line.startsWith('turn/'))).toEqual(['turn/start 1 prompt', 'turn/end 1 interrupted'])
      }
      await h.expectClean()
    } finally {
      await h.dispose()
    }
  })
})
