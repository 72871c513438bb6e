import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { trace } from '@deepseek-ai/dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { chars, compactionEvents, harness, turn } from './helpers'

const repository = fileURLToPath(new URL('../../../..', import.meta.url))
const child = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url))
const directories: string[] = []
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true })
})

describe('a real process killed during a summary (R-CMP-5, R-CMP-7)', () => {
  it('SIGKILL between compaction/start and the summary: the resume shadows nothing, says so in the log, and compacts again', { timeout: 60_000 }, async () => {
    const directory = mkdtempSync(join(tmpdir(), 'dsh-compaction-crash-'))
    directories.push(directory)
    const process_ = spawn(process.execPath, ['--conditions=dsh-source', '--import', 'tsx', child, directory], { cwd: repository, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    process_.stderr.on('data', (data: Buffer) => void (stderr += data.toString()))
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) => process_.on('exit', (code, signal) => resolve(signal ?? code)))
    let history = ''
    for await (const line of createInterface({ input: process_.stdout })) {
      if (line === 'SUMMARY') {
        process_.kill('SIGKILL')
        break
      }
      history = line
    }
    expect({ exit: await exited, stderr }).toEqual({ exit: 'SIGKILL', stderr: '' })

    const h = await harness({ window: 10_000, maxOutput: 2_000, jsonl: directory, respond: () => ({ text: chars(1_000, 'a'), usage: false }) })
    const agent = await h.resume('crash')
    // The start was flushed before the summary call; the loader closed the open turn, the plugin the compaction.
    expect(trace(agent.session).slice(-4)).toEqual(['turn/start 5 prompt', 'compaction/start', 'turn/end 5 interrupted', 'compaction/failed'])
    expect((compactionEvents(agent.session).at(-1)!.data as { code: string }).code).toBe('INTERRUPTED')
    expect(JSON.stringify(agent.session.deriveMessages())).toBe(history)

    await turn(agent, 'again')
    expect(compactionEvents(agent.session).map((event) => event.type)).toEqual(['compaction/start', 'compaction/failed', 'compaction/start', 'compaction/summary'])
    await h.expectClean()
    await h.dispose()
  })
})
