import { describe, expect, it } from 'vitest'
import { ExitGuard, bound } from '../src/cli/exit-guard'

describe('bound (a signal bounding a close already under way)', () => {
  it('leaves a failed close to whoever awaits it: no unhandled rejection, which would end the process', async () => {
    const aborted: string[] = []
    const guard = new ExitGuard(() => {
      aborted.push('abort')
      return undefined as never
    }, 2 ** 31 - 1)
    let fail!: (error: Error) => void
    const closing = new Promise<void>((_resolve, reject) => (fail = reject))
    const awaited = closing.then(
      () => 'closed',
      (error: Error) => error.message,
    )
    bound(guard, closing)
    fail(new Error('the app could not be unloaded'))
    expect([await awaited, guard.started, aborted]).toEqual(['the app could not be unloaded', true, []])
    // Let a rejection left unhandled surface (Vitest fails the run on one).
    await new Promise((resolve) => setImmediate(resolve))
  })
})
