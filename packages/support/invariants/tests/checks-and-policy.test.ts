import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Invariants, { InvariantError, type InvariantPolicy } from '@deepseek-ai/dsh-invariants'

async function mount(policy?: InvariantPolicy) {
  const root = new Context()
  await root.plugin(Invariants, policy ? { policy } : {})
  return root
}

describe('ctx.invariants', () => {
  it('runs every check and returns what they found, as objects', async () => {
    const root = await mount('collect')
    root.invariants.register('a', () => ['first problem'])
    root.invariants.register('b', () => [{ invariant: 'b', message: 'second', details: { seq: 3 } }])
    root.invariants.register('c', () => undefined)
    expect(await root.invariants.check()).toEqual([
      { invariant: 'a', message: 'first problem' },
      { invariant: 'b', message: 'second', details: { seq: 3 } },
    ])
    expect(root.invariants.violations).toHaveLength(2)
  })

  it('under throw, check() rejects with every violation and report() throws', async () => {
    const root = await mount('throw')
    root.invariants.register('a', async () => ['broken'])
    const error = await root.invariants.check().catch((e) => e)
    expect(error).toBeInstanceOf(InvariantError)
    expect(error).toMatchObject({ code: 'INVARIANT_VIOLATION', violations: [{ invariant: 'a', message: 'broken' }] })
    expect(() => root.invariants.report('x', 'eager')).toThrow(/\[x\] eager/)
  })

  it('defaults to log: violations are logged as errors and do not throw', async () => {
    const root = await mount()
    const logged: string[] = []
    root.logger.exporter({ export: (message) => void logged.push(`${message.type}:${message.args.join(' ')}`) })
    root.invariants.report('x', 'eager')
    expect(logged.some((line) => line.startsWith('error:') && line.includes('eager'))).toBe(true)
  })

  it('a check that returns one message as a plain string reports that message once, not one violation per character', async () => {
    const root = await mount('collect')
    // A string is an Iterable<string>, so the type lets a check return one.
    root.invariants.register('single', () => 'broken')
    root.invariants.register('none', () => '')
    expect(await root.invariants.check()).toEqual([{ invariant: 'single', message: 'broken' }])
  })

  it('a check that throws is reported as a violation of its invariant', async () => {
    const root = await mount('collect')
    root.invariants.register('fragile', () => {
      throw new Error('cannot read')
    })
    expect(await root.invariants.check()).toEqual([{ invariant: 'fragile', message: 'the check itself failed: cannot read' }])
  })

  it('can run only the named checks', async () => {
    const root = await mount('collect')
    root.invariants.register('a', () => ['a'])
    root.invariants.register('b', () => ['b'])
    expect((await root.invariants.check(['b'])).map((v) => v.invariant)).toEqual(['b'])
  })

  it('emits every violation and reverts checks with the registering fiber', async () => {
    const root = await mount('collect')
    const seen: string[] = []
    root.on('invariants/violation', (v) => void seen.push(v.message))
    const fiber = root.plugin({ inject: ['invariants'], apply: (ctx: Context) => void ctx.invariants.register('p', () => ['p']) })
    await fiber
    expect(root.invariants.names()).toEqual(['p'])
    await root.invariants.check()
    await fiber.dispose()
    expect(root.invariants.names()).toEqual([])
    expect(await root.invariants.check()).toEqual([])
    expect(seen).toEqual(['p'])
  })

  it('notice() from a listener never throws: under throw it is held for the next check, elsewhere recorded at once', async () => {
    const strict = await mount('throw')
    expect(() => strict.invariants.notice({ invariant: 'a', message: 'seen in a listener' })).not.toThrow()
    expect(strict.invariants.violations).toEqual([])
    await expect(strict.invariants.check(['b'])).resolves.toEqual([])
    await expect(strict.invariants.check()).rejects.toMatchObject({ violations: [{ invariant: 'a', message: 'seen in a listener' }] })
    await expect(strict.invariants.check()).resolves.toEqual([])

    const relaxed = await mount('collect')
    relaxed.invariants.notice({ invariant: 'a', message: 'now' })
    expect(relaxed.invariants.violations).toEqual([{ invariant: 'a', message: 'now' }])
  })
})
