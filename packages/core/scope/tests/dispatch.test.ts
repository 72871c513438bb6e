import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { scoped, scopeOf, subjectFilter } from '@deepseek-ai/dsh-scope'

declare module 'cordis' {
  interface Events {
    'test/ping'(subject: string): void
    'test/fold'(value: number, next: () => number): number
  }
}

describe('scoped contexts', () => {
  it('marks a context and every plugin loaded under it with the subject', async () => {
    const root = new Context()
    const a = scoped(root, 'agent-a')
    expect(scopeOf(root)).toBeUndefined()
    expect(scopeOf(a)).toBe('agent-a')
    let inner: string | undefined
    await a.plugin({ apply: (ctx: Context) => void (inner = scopeOf(ctx)) })
    expect(inner).toBe('agent-a')
  })

  it('refuses an empty subject', () => {
    expect(() => scoped(new Context(), '')).toThrow(/non-empty/)
  })
})

describe('scope-filtered dispatch', () => {
  it('delivers an event to global listeners and to listeners of its own subject only', async () => {
    const root = new Context()
    const seen: string[] = []
    root.on('test/ping', (s) => void seen.push(`global:${s}`))
    scoped(root, 'a').on('test/ping', (s) => void seen.push(`a:${s}`))
    await scoped(root, 'b').plugin({
      apply: (ctx: Context) => ctx.on('test/ping', (s) => void seen.push(`b-plugin:${s}`)),
    })

    root.emit(subjectFilter('a'), 'test/ping', 'a')
    root.emit(subjectFilter('b'), 'test/ping', 'b')
    root.emit(subjectFilter('c'), 'test/ping', 'c')
    expect(seen).toEqual(['global:a', 'a:a', 'global:b', 'b-plugin:b', 'global:c'])
  })

  it('an unfiltered dispatch reaches every listener', () => {
    const root = new Context()
    const seen: string[] = []
    root.on('test/ping', () => void seen.push('global'))
    scoped(root, 'a').on('test/ping', () => void seen.push('a'))
    root.emit('test/ping', 'x')
    expect(seen).toEqual(['global', 'a'])
  })

  it('filters waterfall middleware the same way', () => {
    const root = new Context()
    root.on('test/fold', (v, next) => next() + 1)
    scoped(root, 'a').on('test/fold', (v, next) => next() * 10)
    scoped(root, 'b').on('test/fold', (v, next) => next() - 100)
    expect(root.waterfall(subjectFilter('a'), 'test/fold', 1, () => 1)).toBe(11)
    expect(root.waterfall(subjectFilter('b'), 'test/fold', 1, () => 1)).toBe(-98)
  })

  it('a scoped listener stops receiving once its fiber is disposed', async () => {
    const root = new Context()
    const seen: string[] = []
    const fiber = scoped(root, 'a').plugin({
      apply: (ctx: Context) => ctx.on('test/ping', (s) => void seen.push(s)),
    })
    await fiber
    root.emit(subjectFilter('a'), 'test/ping', 'before')
    await fiber.dispose()
    root.emit(subjectFilter('a'), 'test/ping', 'after')
    expect(seen).toEqual(['before'])
  })
})
