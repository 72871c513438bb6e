/**
 * A bench child that does not do its job (never ends, prints a result that
 * cannot be read, crashes) fails its run with a message naming what
 * happened; the bench never waits forever nor dies on an exception of its own.
 */
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import { readFileSync } from 'node:fs'
import { runChild } from '../src/lib/child-process.ts'

/** Whether `pid` runs: it exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z'
  } catch {
    return false
  }
}

const fixture = fileURLToPath(new URL('./fixtures/misbehaving-child.mjs', import.meta.url))

describe.concurrent('runChild', () => {
  it('kills a child that does not finish within its time and says so', async () => {
    await expect(runChild(fixture, ['hang', 'dsh'], [], process.execPath, 1000)).rejects.toThrow(
      `bench child ${fixture} hang dsh did not finish within 1 s (--child-timeout): it was killed`,
    )
  })

  it('kills the processes a hung child started too (one holding a session lease would block the runs after it)', async () => {
    const error = await runChild(fixture, ['hang-with-helper', 'dsh'], [], process.execPath, 10_000).then(
      () => undefined,
      (failure: Error) => failure,
    )
    expect(error?.message).toContain('did not finish within 10 s (--child-timeout): it was killed')
    const helper = Number(/helper (\d+)/.exec(error?.message ?? '')?.[1])
    expect(helper).toBeGreaterThan(0)
    // A SIGKILL sent to another process takes effect when the kernel next runs it (later on a loaded machine);
    // re-parented, it may stay a zombie until reaped. Without the kill it would run forever: a generous ceiling.
    await vi.waitFor(() => expect(alive(helper)).toBe(false), { timeout: 15_000, interval: 50 })
  })

  it('fails the run when the result line is not JSON', async () => {
    await expect(runChild(fixture, ['bad-result', 'dsh'])).rejects.toThrow(`bench child ${fixture} bad-result dsh printed a result line that is not JSON: {"usPerTurn": 12`)
  })

  it('fails the run when the child crashes, with what it said on stderr', async () => {
    await expect(runChild(fixture, ['crash', 'dsh'])).rejects.toThrow(`bench child ${fixture} crash dsh exited with code 3 without a result:\nthe scenario broke`)
  })
})
