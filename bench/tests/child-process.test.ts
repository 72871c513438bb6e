/**
 * A bench child that does not do its job (never ends, prints a result that
 * cannot be read, crashes) fails its run with a message naming what
 * happened; the bench never waits forever nor dies on an exception of its own.
 */
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { runChild } from '../src/lib/child-process.ts'

const fixture = fileURLToPath(new URL('./fixtures/misbehaving-child.mjs', import.meta.url))

describe.concurrent('runChild', () => {
  it('kills a child that does not finish within its time and says so', async () => {
    await expect(runChild(fixture, ['hang', 'dsh'], [], process.execPath, 1000)).rejects.toThrow(
      `bench child ${fixture} hang dsh did not finish within 1 s (--child-timeout): it was killed`,
    )
  })

  it('fails the run when the result line is not JSON', async () => {
    await expect(runChild(fixture, ['bad-result', 'dsh'])).rejects.toThrow(`bench child ${fixture} bad-result dsh printed a result line that is not JSON: {"usPerTurn": 12`)
  })

  it('fails the run when the child crashes, with what it said on stderr', async () => {
    await expect(runChild(fixture, ['crash', 'dsh'])).rejects.toThrow(`bench child ${fixture} crash dsh exited with code 3 without a result:\nthe scenario broke`)
  })
})
