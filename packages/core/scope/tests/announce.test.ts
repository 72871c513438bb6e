import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { announce, rawEvents, scoped, subjectFilter } from '@deepseek-ai/dsh-scope'
import { errorSink } from './helpers'

declare module 'cordis' {
  interface Events {
    'test/announced'(thing: string): void
  }
}

const unexpected = (error: unknown) => {
  throw new Error(`unexpected rejection: ${String(error)}`)
}

describe('announce', () => {
  it('a synchronous throw vetoes: it propagates and the later listeners are not called', () => {
    const root = new Context()
    const events = rawEvents(root)
    const seen: string[] = []
    const veto = new Error('refused')
    root.on('test/announced', (thing) => void seen.push(`first:${thing}`))
    root.on('test/announced', (thing) => {
      seen.push(`vetoer:${thing}`)
      throw veto
    })
    root.on('test/announced', (thing) => void seen.push(`third:${thing}`))

    let thrown: unknown
    try {
      announce(events, subjectFilter('a'), 'test/announced', ['a'], unexpected)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBe(veto)
    expect(seen).toEqual(['first:a', 'vetoer:a'])
  })

  it('a rejected promise cannot veto: every listener runs and the rejection is reported', async () => {
    const root = new Context()
    const sink = errorSink()
    const seen: string[] = []
    root.on('test/announced', (async (thing: string) => {
      seen.push(`async:${thing}`)
      throw new Error('too late to refuse')
    }) as never)
    root.on('test/announced', (thing) => void seen.push(`after:${thing}`))

    announce(rawEvents(root), null, 'test/announced', ['a'], sink.report)
    expect(seen).toEqual(['async:a', 'after:a'])
    await sink.until(1)
    expect(sink.messages()).toEqual(['too late to refuse'])
  })

  it('is scope-filtered: another subject listeners neither see nor veto it, global ones always do', () => {
    const root = new Context()
    const seen: string[] = []
    scoped(root, 'b').on('test/announced', () => {
      throw new Error('b vetoes everything it sees')
    })
    scoped(root, 'b').on('test/announced', (thing) => void seen.push(`b-global:${thing}`), { global: true })
    scoped(root, 'a').on('test/announced', (thing) => void seen.push(`a:${thing}`))
    root.on('test/announced', (thing) => void seen.push(`global:${thing}`))

    announce(rawEvents(root), subjectFilter('a'), 'test/announced', ['a'], unexpected)
    expect(seen).toEqual(['b-global:a', 'a:a', 'global:a'])
    expect(() => announce(rawEvents(root), subjectFilter('b'), 'test/announced', ['b'], unexpected)).toThrow('b vetoes everything it sees')
  })

  it('notifies internal/dispatch tracers, and does nothing else when nobody listens', () => {
    const root = new Context()
    const events = rawEvents(root)
    announce(events, null, 'test/announced', ['nobody'], unexpected)
    const traced: unknown[] = []
    root.on('internal/dispatch', (mode, name, args) => void traced.push([mode, name, [...args]]))
    announce(events, null, 'test/announced', ['traced'], unexpected)
    expect(traced).toEqual([['emit', 'test/announced', ['traced']]])
  })

  it('a listener that detaches itself during the announcement does not hide it from the next', () => {
    const root = new Context()
    const seen: string[] = []
    root.once('test/announced', (thing) => void seen.push(`once:${thing}`))
    root.on('test/announced', (thing) => void seen.push(`next:${thing}`))
    announce(rawEvents(root), null, 'test/announced', ['1'], unexpected)
    announce(rawEvents(root), null, 'test/announced', ['2'], unexpected)
    expect(seen).toEqual(['once:1', 'next:1', 'next:2'])
  })
})
