import { describe, expect, it, vi } from 'vitest'
import { runShell, type ShellRun } from '../src/shell-process'
import { processesWith, tempDir } from './helpers'

/** A run of `sh -c command` in a fresh directory, with bounds no test reaches. */
function shellRun(command: string, sandboxed: boolean): ShellRun {
  return {
    argv: ['sh', '-c', command],
    cwd: tempDir(),
    env: process.env,
    timeoutMs: 600_000,
    killGraceMs: 2_000,
    maxOutputBytes: 30_000,
    signal: new AbortController().signal,
    sandboxed,
  }
}

/** A `sleep` argument no other process on the machine has: the test finds its process by it. */
function marker(): string {
  return `${5000 + Math.floor(Math.random() * 1000)}.${process.pid}`
}

// A member of the group that outlives the shell for as long as the test needs: the state in which a
// sandbox's own init (bubblewrap's pid 1) was still alive when the shell's exit was seen, held still
// instead of raced for.
describe('runShell: a process of the group still there when the shell exits', () => {
  it('is reported and killed', async () => {
    const sleep = marker()
    expect(await runShell(shellRun(`sleep ${sleep} & echo started`, false))).toEqual({
      output: 'started\n',
      outputBytes: 8,
      exitCode: 0,
      exitSignal: null,
      leftovers: true,
    })
    await vi.waitFor(() => expect(processesWith(`sleep\u0000${sleep}`)).toEqual([]), { timeout: 20_000, interval: 50 })
  })

  it('is killed but not reported for a sandboxed run, where it may be bubblewrap tearing the sandbox down', async () => {
    const sleep = marker()
    expect(await runShell(shellRun(`sleep ${sleep} & echo started`, true))).toEqual({
      output: 'started\n',
      outputBytes: 8,
      exitCode: 0,
      exitSignal: null,
      leftovers: false,
    })
    await vi.waitFor(() => expect(processesWith(`sleep\u0000${sleep}`)).toEqual([]), { timeout: 20_000, interval: 50 })
  })
})
