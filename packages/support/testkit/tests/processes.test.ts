import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { alive } from '@deepseek-ai/dsh-testkit'

const state = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2)[0]
}

const started: number[] = []
afterEach(() => {
  for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL')
})

describe('alive', () => {
  it('a process that exited but was not reaped yet (a zombie: its parent never waits, or init has not got to it) is not alive', async () => {
    // The shell starts a child, then becomes a `sleep`, which never reaps it; the child is killed only once the
    // shell is gone (a shell still running would reap it itself).
    const parent = spawn('sh', ['-c', 'sleep 1000 & echo $!; exec sleep 1001'], { stdio: ['ignore', 'pipe', 'ignore'] })
    started.push(parent.pid!)
    const pid = await new Promise<number>((resolve) => parent.stdout!.once('data', (data: Buffer) => resolve(Number(String(data).trim()))))
    started.push(pid)
    await vi.waitFor(() => expect(readFileSync(`/proc/${parent.pid}/cmdline`, 'utf8')).toBe('sleep\u00001001\u0000'), { timeout: 20_000, interval: 20 })
    process.kill(pid, 'SIGKILL')
    await vi.waitFor(() => expect(state(pid)).toBe('Z'), { timeout: 20_000, interval: 20 })
    expect([alive(parent.pid!), alive(pid)]).toEqual([true, false])
  })
})
