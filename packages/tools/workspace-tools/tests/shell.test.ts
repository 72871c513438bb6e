import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { alive, mount, tempDir } from './helpers'
import type { WorkspaceToolsOptions } from '@deepseek-ai/dsh-workspace-tools'

const unconfined = { shell: { sandbox: 'off' } } satisfies Partial<WorkspaceToolsOptions>

/** The real `setTimeout`, taken before any test fakes the timers. */
const realSetTimeout = globalThis.setTimeout

/**
 * The pid a command wrote to `file` in the workspace, once it is there (up to
 * 20 s). Polled on real timers: `vi.waitFor` moves fake timers on by its
 * interval at each try, which would fire the command's own timer early.
 */
async function pidFrom(root: string, file: string): Promise<number> {
  const deadline = Date.now() + 20_000
  for (;;) {
    let pid = 0
    try {
      pid = Number(readFileSync(join(root, file), 'utf8').trim())
    } catch {
      // Not written yet.
    }
    if (pid > 0) return pid
    if (Date.now() > deadline) throw new Error(`${file} held no pid after 20 s`)
    await new Promise((resolve) => realSetTimeout(resolve, 20))
  }
}

afterEach(() => {
  delete process.env.DSH_TEST_API_KEY
})

describe('shell', () => {
  it('runs in the workspace and returns the output and the exit code (a failing command is a result, not an error)', async () => {
    const root = tempDir()
    const { run } = await mount(root, unconfined)
    expect(await run('shell', { command: 'pwd' })).toEqual({ code: 'ok', text: `${realpathSync(root)}\n[exit code 0]` })
    expect(await run('shell', { command: 'printf "hello\\n"; exit 3' })).toEqual({ code: 'ok', text: 'hello\n[exit code 3]' })
    expect(await run('shell', { command: 'echo oops >&2' })).toEqual({ code: 'ok', text: 'oops\n[exit code 0]' })
    expect(await run('shell', { command: 'true' })).toEqual({ code: 'ok', text: '[no output]\n[exit code 0]' })
    expect(await run('shell', { command: 'kill -9 $$' })).toEqual({ code: 'ok', text: '[no output]\n[killed by SIGKILL]' })
  })

  it('keeps the head and the tail of a long output and says how much it cut', async () => {
    const root = tempDir()
    const { run } = await mount(root, { shell: { sandbox: 'off', maxOutputBytes: 256 } })
    const full = `${Array.from({ length: 10_000 }, (_, i) => i + 1).join('\n')}\n`
    expect(await run('shell', { command: 'seq 1 10000' })).toEqual({
      code: 'ok',
      text: `${full.slice(0, 128)}\n[… ${full.length - 256} bytes cut from the middle of the output …]\n${full.slice(-128, -1)}\n[exit code 0]`,
    })
    // 500 writes of a 3-byte character: both cuts fall inside a character, which is left out whole.
    expect(await run('shell', { command: "for i in $(seq 1 500); do printf '€'; done" })).toEqual({
      code: 'ok',
      text: `${'€'.repeat(42)}\n[… 1248 bytes cut from the middle of the output …]\n${'€'.repeat(42)}\n[exit code 0]`,
    })
  })

  it('a timeout stops the whole process group: the shell and what it started in the background', async () => {
    const root = tempDir()
    const { run } = await mount(root, unconfined)
    // The command's timer is moved by hand, from when the command is in its `wait`: a real 500 ms can
    // be over before a loaded machine has even started the shell, and the test would time out a
    // command that had printed nothing and started nothing yet.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const pending = run('shell', { command: 'echo $$ > shell.pid; echo waiting; sleep 1000 & echo $! > child.pid; wait', timeout_ms: 500 })
      const pids = [await pidFrom(root, 'shell.pid'), await pidFrom(root, 'child.pid')]
      await vi.advanceTimersByTimeAsync(499)
      expect(pids.map(alive)).toEqual([true, true])
      await vi.advanceTimersByTimeAsync(1)
      expect(await pending).toEqual({
        code: 'TIMEOUT',
        text: 'Error: the command timed out after 0.5 s; it and every process it started were stopped. Output so far:\nwaiting',
      })
      vi.useRealTimers()
      await vi.waitFor(() => expect(pids.map(alive)).toEqual([false, false]), { timeout: 20_000, interval: 50 })
    } finally {
      vi.useRealTimers()
    }
  })

  it('a cancel stops the whole process group and returns what the command printed, marked as cancelled', async () => {
    const root = tempDir()
    const { run } = await mount(root, unconfined)
    const controller = new AbortController()
    const pending = run('shell', { command: 'echo $$ > shell.pid; echo begun; sleep 1000 & echo $! > child.pid; wait' }, { signal: controller.signal })
    const pids = [await pidFrom(root, 'shell.pid'), await pidFrom(root, 'child.pid')]
    expect(pids.map(alive)).toEqual([true, true])
    controller.abort()
    expect(await pending).toEqual({ code: 'ok', text: 'begun\n[cancelled: the command and every process it started were stopped]' })
    await vi.waitFor(() => expect(pids.map(alive)).toEqual([false, false]), { timeout: 20_000, interval: 50 })
  })

  it('stops processes a command leaves running (no background mode yet), and says so', async () => {
    const root = tempDir()
    const { run } = await mount(root, unconfined)
    expect(await run('shell', { command: 'sleep 1000 & echo $! > child.pid; echo started' })).toEqual({
      code: 'ok',
      text: 'started\n[exit code 0]\n[processes the command left running were stopped: the shell tool has no background mode]',
    })
    const pid = await pidFrom(root, 'child.pid')
    await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 20_000, interval: 50 })
  })

  it('does not pass variables that look like secrets, unless told to', async () => {
    process.env.DSH_TEST_API_KEY = 'sk-test-not-real'
    const root = tempDir()
    const { run } = await mount(root, unconfined)
    expect(await run('shell', { command: 'echo "[$DSH_TEST_API_KEY] [$NO_COLOR]"' })).toEqual({ code: 'ok', text: '[] [1]\n[exit code 0]' })
    const { run: trusting } = await mount(root, { shell: { sandbox: 'off', passSecrets: true } })
    expect(await trusting('shell', { command: 'echo "[$DSH_TEST_API_KEY]"' })).toEqual({ code: 'ok', text: '[sk-test-not-real]\n[exit code 0]' })
  })

  it('refuses a timeout above the configured maximum', async () => {
    const root = tempDir()
    const { run } = await mount(root, { shell: { sandbox: 'off', maxTimeoutMs: 5_000 } })
    expect(await run('shell', { command: 'true', timeout_ms: 6_000 })).toMatchObject({ code: 'INVALID_ARGUMENTS' })
    expect(existsSync(join(root, 'x'))).toBe(false)
  })
})
