import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fullDisk, runDemo, startDemo, workspace } from './helpers'

/** The JSON lines of `--json` output. */
function jsonLines(stdout: string): { type: string; seq?: number; data: Record<string, unknown> }[] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; seq?: number; data: Record<string, unknown> })
}

// Issue 14.1: on a full disk `-p` exited 0, printed "continue with --resume" and left a 0-byte file.
describe.concurrent('dsh-demo when the session log cannot be saved', { timeout: 60_000 }, () => {
  it('-p: prints the failure, never offers --resume, and exits 1', async () => {
    const cwd = workspace()
    const disk = fullDisk()
    const { status, stdout, stderr } = await runDemo(['-p', 'hello', '--data-dir', disk.dataDir], { cwd, env: disk.env })
    expect(status).toBe(1)
    // The answer is not printed as if the run had succeeded: the turn failed before it ended.
    expect(stdout).toBe('')
    const lines = stderr.trimEnd().split('\n')
    expect(lines).toEqual([
      expect.stringMatching(/^· turn 1 failed: PERSISTENCE_FAILED: the session log of agent \S+ could not be made durable: .*(ENOSPC|no space left).* · .*$/),
      expect.stringMatching(/^✗ session \S+ was not saved completely \(PERSISTENCE_FAILED\)$/),
    ])
    expect(stderr).not.toMatch(/--resume/)
    if (disk.kind === 'tmpfs') {
      // What the disk holds of it: nothing (the file the backend created could not be written).
      const logs = readdirSync(disk.dataDir).filter((name) => name.endsWith('.jsonl'))
      expect(logs.map((name) => statSync(join(disk.dataDir, name)).size)).toEqual([0])
    }
  })

  it('--json: the failure is an agent/error line (no seq), the exit status 1, stderr quiet', async () => {
    const cwd = workspace()
    const disk = fullDisk()
    const { status, stdout, stderr } = await runDemo(['-p', 'hello', '--json', '--data-dir', disk.dataDir], { cwd, env: disk.env })
    expect({ status, stderr }).toEqual({ status: 1, stderr: '' })
    const lines = jsonLines(stdout)
    const errors = lines.filter((line) => line.seq === undefined)
    expect(errors).toEqual([
      {
        type: 'agent/error',
        time: expect.any(Number),
        data: { turn: 1, step: 1, code: 'PERSISTENCE_FAILED', message: expect.stringMatching(/^the session log of agent \S+ could not be made durable: /) },
      },
    ])
    // The log's own lines keep their schema: a dense seq from 0.
    const events = lines.filter((line) => line.seq !== undefined)
    expect(events.map((line) => line.seq)).toEqual(events.map((_, index) => index))
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'error', failure: { code: 'PERSISTENCE_FAILED' } } } })
  })

  it('interactive: says the session is no longer saved, refuses more prompts in it, and exits 1', async () => {
    const cwd = workspace()
    const disk = fullDisk()
    const demo = startDemo(['--data-dir', disk.dataDir], { cwd, env: disk.env })
    await demo.waitFor(/^> /m)
    demo.write('hello\n')
    await demo.waitFor(/^> /m, 2)
    demo.write('hello again\n')
    await demo.waitFor(/^> /m, 3)
    demo.end()
    expect(await demo.exited).toBe(1)
    const id = /^session (\S+) ·/m.exec(demo.stdout())![1]!
    const after = demo.stdout().split('\n').slice(5)
    expect(after).toEqual([
      expect.stringMatching(new RegExp(`^· turn 1 failed: PERSISTENCE_FAILED: the session log of agent ${id} could not be made durable: `)),
      `✗ session ${id} is no longer being saved and takes no more prompts: /new starts another one, /exit quits`,
      '> ',
      expect.stringMatching(new RegExp(`^✗ PERSISTENCE_FAILED: the session log of agent ${id} could not be made durable: `)),
      '> ',
      '',
    ])
  })
})
