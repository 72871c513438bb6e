import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { heard, rawEvents, scoped, subjectFilter } from '@deepseek-ai/dsh-scope'

declare module 'cordis' {
  interface Events {
    'test/raw'(tag: string): void
    'test/raw-fold'(value: number, next: () => number): number
  }
}

describe('rawEvents', () => {
  it('is the one events service of the app, whichever context it is read from', async () => {
    const root = new Context()
    let plugin!: Context
    await root.plugin({ apply: (ctx: Context) => void (plugin = ctx) })
    expect(rawEvents(plugin)).toBe(rawEvents(root))
    expect(rawEvents(scoped(root, 'a'))).toBe(rawEvents(root))
  })

  it('dispatches like the context methods, scope filter included', () => {
    const root = new Context()
    const events = rawEvents(root)
    const seen: string[] = []
    root.on('test/raw', (tag) => void seen.push(`global:${tag}`))
    scoped(root, 'a').on('test/raw', (tag) => void seen.push(`a:${tag}`))
    scoped(root, 'b').on('test/raw', (tag) => void seen.push(`b:${tag}`))
    root.on('test/raw-fold', (value, next) => next() + value)
    scoped(root, 'a').on('test/raw-fold', (value, next) => next() * 10)

    events.emit(subjectFilter('a'), 'test/raw', 'x')
    events.emit('test/raw', 'y')
    expect(seen).toEqual(['global:x', 'a:x', 'global:y', 'a:y', 'b:y'])
    expect(events.waterfall(subjectFilter('a'), 'test/raw-fold', 2, () => 1)).toBe(12)
    expect(events.waterfall(subjectFilter('b'), 'test/raw-fold', 2, () => 1)).toBe(3)
  })
})

describe('heard', () => {
  it('is true while anyone listens to the event or traces dispatches, whatever their scope', async () => {
    const root = new Context()
    const events = rawEvents(root)
    const states: boolean[] = [heard(events, 'test/raw')]

    const fiber = scoped(root, 'b').plugin({ apply: (ctx: Context) => ctx.on('test/raw', () => {}) })
    await fiber
    states.push(heard(events, 'test/raw'))
    await fiber.dispose()
    states.push(heard(events, 'test/raw'))

    const untrace = root.on('internal/dispatch', () => {})
    states.push(heard(events, 'test/raw'))
    untrace()
    states.push(heard(events, 'test/raw'))

    expect(states).toEqual([false, true, false, true, false])
  })
})
