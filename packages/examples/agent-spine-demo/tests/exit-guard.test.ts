import { describe, expect, it } from 'vitest'
import { ExitGuard, bound, firstStop } from '../src/cli/exit-guard'

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

describe('firstStop (SIGTERM and SIGHUP: the first closes down, a second ends the process at once)', () => {
  /** An abort that records the signal and throws, as `never` allows (the real one kills the process). */
  function aborts() {
    const signals: string[] = []
    const abort = (signal: string): never => {
      signals.push(signal)
      throw new Error(`aborted by ${signal}`)
    }
    return { signals, abort }
  }
  const idle = () => new ExitGuard(() => undefined as never, 2 ** 31 - 1)

  it('the first signal is taken, and nothing is ended', () => {
    const { signals, abort } = aborts()
    expect([firstStop(undefined, 'SIGTERM', idle(), abort), firstStop(undefined, 'SIGHUP', idle(), abort), signals]).toEqual([true, true, []])
  })

  it('a second signal ends the process at once by that signal, whichever came first', () => {
    for (const [first, second] of [['SIGTERM', 'SIGTERM'], ['SIGTERM', 'SIGHUP'], ['SIGHUP', 'SIGTERM']] as const) {
      const { signals, abort } = aborts()
      expect(() => firstStop(first, second, idle(), abort)).toThrow(`aborted by ${second}`)
      expect(signals).toEqual([second])
    }
  })

  it('a repeated SIGHUP is the same hangup: not taken again, and nothing is ended', () => {
    const { signals, abort } = aborts()
    expect([firstStop('SIGHUP', 'SIGHUP', idle(), abort), signals]).toEqual([false, []])
  })

  it('a stop signal once an exit is already closing down (after Ctrl-C or /exit) ends the process at once', () => {
    const { signals, abort } = aborts()
    const guard = idle()
    void guard.close(() => new Promise<void>(() => undefined))
    expect(() => firstStop(undefined, 'SIGTERM', guard, abort)).toThrow('aborted by SIGTERM')
    expect(signals).toEqual(['SIGTERM'])
  })
})
