import { Context, Service } from 'cordis'
import { describe, expect, it } from 'vitest'
import { scoped, scopeOf, untraced } from '@deepseek-ai/dsh-scope'

declare module 'cordis' {
  interface Context {
    scopeProbe: Probe
  }
}

/** A service whose methods register through the caller's context, the pattern `untraced` must keep working. */
class Probe extends Service {
  readonly live = new Set<string>()

  constructor(ctx: Context, config: { plain: boolean }) {
    super(ctx, 'scopeProbe')
    if (config.plain) untraced(this)
  }

  register(value: string): () => void {
    const dispose = this.ctx.effect(() => {
      this.live.add(value)
      return () => void this.live.delete(value)
    }, `scopeProbe.register(${value})`)
    return () => void dispose()
  }

  caller(): Context {
    return this.ctx
  }

  greet(): string {
    return 'hello'
  }
}

async function mount(plain: boolean) {
  const root = new Context()
  await root.plugin(Probe, { plain })
  let user!: Context
  const fiber = scoped(root, 'a').plugin({ inject: ['scopeProbe'], apply: (ctx: Context) => void (user = ctx) })
  await fiber
  return { root, user, fiber }
}

describe.each([
  ['untraced', true],
  ['traced (Cordis default)', false],
])('a %s service', (_, plain) => {
  it('sees the caller context as this.ctx', async () => {
    const { user } = await mount(plain)
    const caller = user.scopeProbe.caller()
    expect(scopeOf(caller)).toBe('a')
    expect(caller.fiber).toBe(user.fiber)
  })

  it('reverts what a method registered through this.ctx with the caller fiber', async () => {
    const { root, user, fiber } = await mount(plain)
    user.scopeProbe.register('from-user')
    root.scopeProbe.register('from-root')
    expect([...root.scopeProbe.live]).toEqual(['from-user', 'from-root'])
    await fiber.dispose()
    expect([...root.scopeProbe.live]).toEqual(['from-root'])
  })
})

describe('untraced', () => {
  it('hands methods out as the plain functions instead of a shadowing proxy per access', async () => {
    const plain = await mount(true)
    const traced = await mount(false)
    expect(plain.user.scopeProbe.greet).toBe(Probe.prototype.greet)
    expect(traced.user.scopeProbe.greet).not.toBe(Probe.prototype.greet)
    expect([plain.user.scopeProbe.greet(), traced.user.scopeProbe.greet()]).toEqual(['hello', 'hello'])
  })
})
