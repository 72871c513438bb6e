import { Context } from 'cordis'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { containedEmitter, emitContained, scoped, subjectFilter } from '@deepseek-ai/dsh-scope'
import { errorSink } from './helpers'

declare module 'cordis' {
  interface Events {
    'test/contained'(tag: string): void
  }
}

type Emit = (thisArg: object | null, name: string, args: readonly unknown[], onError: (error: unknown) => void) => void

/**
 * Both ways of emitting contained: the one-shot function and the bound emitter.
 * The bound emitter is built before any listener exists, so the tests also
 * show it holds the events service, not a copy of its listeners.
 */
const variants: ReadonlyArray<readonly [string, (root: Context) => Emit]> = [
  ['emitContained', (root) => (thisArg, name, args, onError) => emitContained(root, thisArg, name, args, onError)],
  [
    'containedEmitter',
    (root) => {
      const emitter = containedEmitter(root)
      return (thisArg, name, args, onError) => emitter.emit(thisArg, name, args, onError)
    },
  ],
]

const fail = (error: unknown) => {
  throw new Error(`unexpected listener failure: ${String(error)}`)
}

describe.each(variants)('%s', (_, make) => {
  it('delivers to global listeners and to the subject own listeners, in registration order', () => {
    const root = new Context()
    const emit = make(root)
    const seen: string[] = []
    root.on('test/contained', (tag) => void seen.push(`global:${tag}`))
    scoped(root, 'a').on('test/contained', (tag) => void seen.push(`a:${tag}`))
    scoped(root, 'b').on('test/contained', (tag) => void seen.push(`b:${tag}`))
    scoped(root, 'b').on('test/contained', (tag) => void seen.push(`b-global:${tag}`), { global: true })
    root.on('test/contained', (tag) => void seen.push(`prepended:${tag}`), { prepend: true })

    emit(subjectFilter('a'), 'test/contained', ['x'], fail)
    emit(null, 'test/contained', ['y'], fail)
    expect(seen).toEqual([
      'prepended:x',
      'global:x',
      'a:x',
      'b-global:x',
      'prepended:y',
      'global:y',
      'a:y',
      'b:y',
      'b-global:y',
    ])
  })

  it('emitted from a plugin context, reaches listeners registered anywhere in the app', async () => {
    const root = new Context()
    const seen: string[] = []
    root.on('test/contained', (tag) => void seen.push(`root:${tag}`))
    let pluginEmit!: Emit
    await root.plugin({ apply: (ctx: Context) => void (pluginEmit = make(ctx)) })
    await scoped(root, 'a').plugin({ apply: (ctx: Context) => void ctx.on('test/contained', (tag) => void seen.push(`a:${tag}`)) })
    pluginEmit(subjectFilter('a'), 'test/contained', ['x'], fail)
    expect(seen).toEqual(['root:x', 'a:x'])
  })

  it('runs every listener when some throw or reject, and reports each failure', async () => {
    const root = new Context()
    const emit = make(root)
    const sink = errorSink()
    const seen: string[] = []
    root.on('test/contained', () => void seen.push('first'))
    root.on('test/contained', () => {
      throw new Error('boom')
    })
    root.on('test/contained', (async () => {
      throw new Error('later')
    }) as never)
    root.on('test/contained', () => {
      throw 'not an error'
    })
    root.on('test/contained', (tag) => void seen.push(`last:${tag}`))

    emit(null, 'test/contained', ['x'], sink.report)
    expect(seen).toEqual(['first', 'last:x'])
    expect(sink.messages()).toEqual(['boom', 'not an error'])
    await sink.until(3)
    expect(sink.messages()).toEqual(['boom', 'not an error', 'later'])
  })

  it('a listener that removes itself does not make the next one miss the event', () => {
    const root = new Context()
    const emit = make(root)
    const seen: string[] = []
    root.once('test/contained', (tag) => void seen.push(`once:${tag}`))
    root.on('test/contained', (tag) => void seen.push(`next:${tag}`))
    emit(null, 'test/contained', ['1'], fail)
    emit(null, 'test/contained', ['2'], fail)
    expect(seen).toEqual(['once:1', 'next:1', 'next:2'])
  })

  it('a listener removed by an earlier one during the dispatch is still called this once, as with ctx.emit', () => {
    const run = (dispatch: (root: Context, tag: string) => void) => {
      const root = new Context()
      const seen: string[] = []
      let removeLater = () => true
      root.on('test/contained', (tag) => {
        seen.push(`remover:${tag}`)
        removeLater()
      })
      removeLater = root.on('test/contained', (tag) => void seen.push(`removed:${tag}`))
      dispatch(root, '1')
      dispatch(root, '2')
      return seen
    }
    const contained = run((root, tag) => make(root)(null, 'test/contained', [tag], fail))
    expect(contained).toEqual(['remover:1', 'removed:1', 'remover:2'])
    expect(run((root, tag) => root.emit('test/contained', tag))).toEqual(contained)
  })

  it('listeners added during the dispatch wait for the next one (single and several listeners)', () => {
    for (const others of [0, 1]) {
      const root = new Context()
      const emit = make(root)
      const seen: string[] = []
      for (let i = 0; i < others; i++) root.on('test/contained', (tag) => void seen.push(`other:${tag}`))
      const off = root.on('test/contained', (tag) => {
        seen.push(`adder:${tag}`)
        off()
        root.on('test/contained', (t) => void seen.push(`added:${t}`))
        root.on('test/contained', (t) => void seen.push(`prepended:${t}`), { prepend: true })
      })
      emit(null, 'test/contained', ['1'], fail)
      emit(null, 'test/contained', ['2'], fail)
      const before = others ? ['other:1'] : []
      const after = others ? ['prepended:2', 'other:2', 'added:2'] : ['prepended:2', 'added:2']
      expect(seen).toEqual([...before, 'adder:1', ...after])
    }
  })

  it('stops reaching a scoped listener once its fiber is disposed', async () => {
    const root = new Context()
    const emit = make(root)
    const seen: string[] = []
    const fiber = scoped(root, 'a').plugin({ apply: (ctx: Context) => ctx.on('test/contained', (tag) => void seen.push(tag)) })
    await fiber
    emit(subjectFilter('a'), 'test/contained', ['before'], fail)
    await fiber.dispose()
    emit(subjectFilter('a'), 'test/contained', ['after'], fail)
    expect(seen).toEqual(['before'])
  })

  it('still notifies internal/dispatch tracers, also when nobody listens to the event', () => {
    const root = new Context()
    const emit = make(root)
    const traced: unknown[] = []
    root.on('internal/dispatch', (mode, name, args, thisArg) => void traced.push([mode, name, [...args], thisArg]))
    const filter = subjectFilter('a')
    emit(filter, 'test/contained', ['unheard'], fail)
    root.on('test/contained', () => {})
    emit(null, 'test/contained', ['heard'], fail)
    expect(traced).toEqual([
      ['emit', 'test/contained', ['unheard'], filter],
      ['emit', 'test/contained', ['heard'], null],
    ])
  })

  it('calls each listener with the filter as this, like Cordis', () => {
    const root = new Context()
    const emit = make(root)
    const filter = subjectFilter('a')
    const seen: unknown[] = []
    root.on('test/contained', function (this: unknown) {
      seen.push(this)
    })
    emit(filter, 'test/contained', ['x'], fail)
    root.emit(filter, 'test/contained', 'x')
    expect(seen).toEqual([filter, filter])
  })

  it('selects and orders listeners exactly as Cordis emit does, for any mix of scopes and options', () => {
    const registration = fc.record({
      subject: fc.constantFrom(undefined, 'a', 'b'),
      global: fc.boolean(),
      prepend: fc.boolean(),
    })
    fc.assert(
      fc.property(fc.array(registration, { maxLength: 8 }), fc.constantFrom(null, 'a', 'b', 'c'), (registrations, target) => {
        const root = new Context()
        const emit = make(root)
        const seen: number[] = []
        registrations.forEach((r, index) => {
          const ctx = r.subject === undefined ? root : scoped(root, r.subject)
          ctx.on('test/contained', () => void seen.push(index), { global: r.global, prepend: r.prepend })
        })
        const filter = target === null ? null : subjectFilter(target)
        emit(filter, 'test/contained', ['x'], fail)
        const ours = seen.splice(0)
        if (filter === null) root.emit('test/contained', 'x')
        else root.emit(filter, 'test/contained', 'x')
        expect(ours).toEqual(seen)
      }),
      { numRuns: 200 },
    )
  })
})
