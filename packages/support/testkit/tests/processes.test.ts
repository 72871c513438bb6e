import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { alive } from '@deepseek-ai/dsh-testkit'

const state = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2)[0]
}

const parents: number[] = []
afterEach(() => {
  for (const pid of parents.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL')
})

describe('alive', () => {
  it('a process that exited but was not reaped yet (a zombie: its parent never waits, or init has not got to it) is not alive', async () => {
    // The shell starts a child that exits at once, then becomes `sleep`, which never reaps it.
    const parent = spawn('sh', ['-c', 'sh -c "exit 0" & echo $!; exec sleep 1000'], { stdio: ['ignore', 'pipe', 'ignore'] })
    parents.push(parent.pid!)
    const pid = await new Promise<number>((resolve) => parent.stdout!.once('data', (data: Buffer) => resolve(Number(String(data).trim()))))
    await vi.waitFor(() => expect(state(pid)).toBe('Z'), { timeout: 20_000, interval: 20 })
    expect([alive(parent.pid!), alive(pid)]).toEqual([true, false])
  })

})
