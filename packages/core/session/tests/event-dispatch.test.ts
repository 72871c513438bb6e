import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { scoped } from '@deepseek-ai/dsh-scope'
import Sessions, { SessionId, type AnySessionEvent, type Session } from '@deepseek-ai/dsh-session'
import { eventTraceKeeps, traceKeeps } from '../src/log/bound-listeners'
import { captureLogs, setup } from './helpers'

const turnStart = (turn: number) => ({ turn, trigger: { kind: 'prompt' as const } })

/**
 * A session keeps the listeners its subject filter admits between appends
 * (the verdicts are cached until Cordis' listener list changes): these pin
 * that every change of the list is seen by the next append.
 */
describe('session/event dispatch as the listeners change between appends', () => {
  it('a listener added, removed or replaced between two appends is called exactly for the appends it was registered for', async () => {
    const root = await setup()
    const calls: string[] = []
    const session = root.sessions.create(SessionId('s'))
    session.append('turn/start', turnStart(1)) // seq 1, nobody listens
    const disposeA = root.on('session/event', (_s, event) => void calls.push(`a:${event.seq}`))
    session.append('step/start', { turn: 1, step: 1 }) // seq 2
    const disposeB = root.on('session/event', (_s, event) => void calls.push(`b:${event.seq}`))
    session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } }) // seq 3
    disposeA()
    // Same length as before the removal once C is added: a list of the same size with another record.
    root.on('session/event', (_s, event) => void calls.push(`c:${event.seq}`))
    session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'y' } }) // seq 4
    disposeB()
    session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'z' } }) // seq 5
    expect(calls).toEqual(['a:2', 'a:3', 'b:3', 'b:4', 'c:4', 'c:5'])
  })

  it('the listeners of a session\'s first event are those registered then, whatever changed since the session was created', async () => {
    const root = await setup()
    const calls: string[] = []
    const disposeA = root.on('session/event', (_s, event) => void calls.push(`a:${event.seq}`))
    root.on('session/event', (_s, event) => void calls.push(`b:${event.seq}`))
    const session = root.sessions.create(SessionId('s'))
    // Between the session's creation (its dispatch admits the listeners then) and its first event:
    // one removed and one added, so the list has the same length with another record.
    disposeA()
    root.on('session/event', (_s, event) => void calls.push(`c:${event.seq}`))
    session.append('turn/start', turnStart(1))
    expect(calls).toEqual(['b:1', 'c:1'])
  })

  it('the last listener removed (Cordis drops the list) and a new one added: the new one is called', async () => {
    const root = await setup()
    const calls: string[] = []
    const session = root.sessions.create(SessionId('s'))
    const dispose = root.on('session/event', (_s, event) => void calls.push(`first:${event.seq}`))
    session.append('turn/start', turnStart(1))
    dispose()
    session.append('step/start', { turn: 1, step: 1 })
    root.on('session/event', (_s, event) => void calls.push(`second:${event.seq}`))
    session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } })
    expect(calls).toEqual(['first:1', 'second:3'])
  })

  it('a listener added by a listener during a dispatch is called from the next event on; one removed during it still gets that event', async () => {
    const root = await setup()
    const calls: string[] = []
    const session = root.sessions.create(SessionId('s'))
    let disposeLate: (() => void) | undefined
    let disposeVictim: (() => void) | undefined
    root.on('session/event', (_s, event) => {
      calls.push(`adder:${event.seq}`)
      if (event.seq === 1) disposeLate = root.on('session/event', (_s2, e) => void calls.push(`late:${e.seq}`))
      if (event.seq === 2) disposeVictim!()
    })
    disposeVictim = root.on('session/event', (_s, event) => void calls.push(`victim:${event.seq}`))
    session.append('turn/start', turnStart(1))
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } })
    disposeLate!()
    expect(calls).toEqual(['adder:1', 'victim:1', 'adder:2', 'victim:2', 'late:2', 'adder:3', 'late:3'])
  })

  it('scope filtering: a listener scoped to another agent is skipped, its own agent and global ones are called, also after the list changed', async () => {
    const root = await setup()
    const calls: string[] = []
    const a = root.sessions.create(SessionId('a'))
    const b = root.sessions.create(SessionId('b'))
    scoped(root, 'a').on('session/event', (session, event) => void calls.push(`scoped-a:${session.id}:${event.seq}`))
    scoped(root, 'a').on('session/event', (session, event) => void calls.push(`global:${session.id}:${event.seq}`), { global: true })
    a.append('turn/start', turnStart(1))
    b.append('turn/start', turnStart(1))
    scoped(root, 'b').on('session/event', (session, event) => void calls.push(`scoped-b:${session.id}:${event.seq}`))
    a.append('step/start', { turn: 1, step: 1 })
    b.append('step/start', { turn: 1, step: 1 })
    expect(calls).toEqual([
      'scoped-a:a:1',
      'global:a:1',
      'global:b:1',
      'scoped-a:a:2',
      'global:a:2',
      'global:b:2',
      'scoped-b:b:2',
    ])
  })

  it('a throwing listener is logged, the next one still runs, and later appends still reach both', async () => {
    const root = await setup()
    const logs = captureLogs(root)
    const calls: string[] = []
    root.on('session/event', (_s, event) => {
      calls.push(`thrower:${event.seq}`)
      throw new Error(`listener broke at ${event.seq}`)
    })
    root.on('session/event', (_s, event) => void calls.push(`next:${event.seq}`))
    const session = root.sessions.create(SessionId('s'))
    session.append('turn/start', turnStart(1))
    session.append('step/start', { turn: 1, step: 1 })
    expect(calls).toEqual(['thrower:1', 'next:1', 'thrower:2', 'next:2'])
    expect(logs.filter((line) => line.includes('a session/event listener failed')).length).toBe(2)
  })

  it('a listener whose own call property was replaced is still called itself, with the filter as this, the session and the event', async () => {
    const root = await setup()
    const calls: unknown[][] = []
    const replaced: string[] = []
    const filters: unknown[] = []
    const listener = function (this: unknown, target: Session, event: AnySessionEvent) {
      filters.push(this)
      calls.push([target, event.seq])
    }
    // A function's `call` is an ordinary property: the dispatch must not go through it.
    Object.defineProperty(listener, 'call', { value: () => void replaced.push('call') })
    root.on('session/event', listener)
    const observed = function (this: unknown, target: Session, event: AnySessionEvent) {
      calls.push(['observer', target === session, event.seq])
    }
    Object.defineProperty(observed, 'call', { value: () => void replaced.push('observer call') })
    root.sessions.observe(observed)
    const session = root.sessions.create(SessionId('s'))
    session.append('turn/start', turnStart(1))
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } })
    expect(replaced).toEqual([])
    expect(calls).toEqual([
      [session, 1],
      ['observer', true, 1],
      [session, 2],
      ['observer', true, 2],
      [session, 3],
      ['observer', true, 3],
    ])
    expect(filters.length).toBe(3)
    for (const filter of filters) expect(filter).toBe((session as unknown as { filter: unknown }).filter)
  })

  it('a listener whose call property is replaced after its list was admitted is still called itself', async () => {
    const root = await setup()
    const calls: number[] = []
    const replaced: number[] = []
    const listener = function (this: unknown, _target: Session, event: AnySessionEvent) {
      calls.push(event.seq)
    }
    root.on('session/event', listener)
    const session = root.sessions.create(SessionId('s'))
    session.append('turn/start', turnStart(1))
    // After the list was admitted (at the session's creation) and used: the dispatch must not go through it either.
    Object.defineProperty(listener, 'call', { value: (_this: unknown, _target: Session, event: AnySessionEvent) => void replaced.push(event.seq) })
    session.append('step/start', { turn: 1, step: 1 })
    expect([calls, replaced]).toEqual([[1, 2], []])
  })

  it('a proxy listener is called through its apply trap alone: no property of it is read per event', async () => {
    const root = await setup()
    const calls: number[] = []
    const reads: PropertyKey[] = []
    const target = function (this: unknown, _target: Session, event: AnySessionEvent) {
      calls.push(event.seq)
    }
    const listener = new Proxy(target, { get: (of, key, receiver) => (reads.push(key), Reflect.get(of, key, receiver)) })
    root.on('session/event', listener)
    const session = root.sessions.create(SessionId('s'))
    reads.length = 0 // what registration and admission read is not the question
    session.append('turn/start', turnStart(1))
    session.append('step/start', { turn: 1, step: 1 })
    expect([calls, reads]).toEqual([[1, 2], []])
  })

  it('internal/dispatch tracers see every session/event dispatch, registered before or between appends', async () => {
    const root = await setup()
    const traced: string[] = []
    const session = root.sessions.create(SessionId('s'))
    root.on('session/event', () => {})
    session.append('turn/start', turnStart(1))
    root.on('internal/dispatch', (type, name, args) => {
      if (name === 'session/event') traced.push(`${type}:${(args[1] as { seq: number }).seq}`)
    })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } })
    expect(traced).toEqual(['emit:2', 'emit:3'])
  })
})

/**
 * `ctx.on` listeners registered while a store is loaded are called without
 * Cordis' tracing proxy when the proxy would pass everything through
 * unchanged: these pin that such a listener sees exactly what one called
 * through the proxy sees, and that the store leaves Cordis as it found it.
 */
describe('ctx.on listeners called without the tracing proxy', () => {
  const original = Symbol.for('cordis.original')
  const rawReflect = (root: Context) => (root.reflect as unknown as Record<symbol, object>)[original]!

  it('a listener registered after the store loaded gets the same this, session and event as one registered before (called through the proxy)', async () => {
    const root = new Context()
    const seen: Array<[string, unknown, Session, AnySessionEvent]> = []
    root.on('session/event', function (this: unknown, session, event) {
      seen.push(['before', this, session, event])
    })
    await root.plugin(Sessions)
    root.on('session/event', function (this: unknown, session, event) {
      seen.push(['after', this, session, event])
    })
    root.once('session/event', function (this: unknown, session, event) {
      seen.push(['once', this, session, event])
    })
    const session = root.sessions.create(SessionId('s'))
    session.append('turn/start', turnStart(1))
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } })
    expect(seen.map(([who, , , event]) => `${who}:${event.seq}`)).toEqual(['before:1', 'after:1', 'once:1', 'before:2', 'after:2', 'before:3', 'after:3'])
    for (const seq of [1, 2, 3]) {
      const [before, ...others] = seen.filter(([, , , event]) => event.seq === seq)
      for (const other of others) {
        expect(other[1]).toBe(before![1])
        expect(other[2]).toBe(before![2])
        expect(other[3]).toBe(before![3])
      }
      expect(before![2]).toBe(session)
    }
  })

  it('unloading the store gives reflect.bind back to Cordis; a store loaded again records anew', async () => {
    const root = new Context()
    const reflect = rawReflect(root)
    const fiber = root.plugin(Sessions)
    await fiber
    expect(Object.hasOwn(reflect, 'bind')).toBe(true)
    await fiber.dispose()
    expect(Object.hasOwn(reflect, 'bind')).toBe(false)
    await root.plugin(Sessions)
    const calls: number[] = []
    root.on('session/event', (_s, event) => void calls.push(event.seq))
    root.sessions.create(SessionId('s')).append('turn/start', turnStart(1))
    expect(calls).toEqual([1])
  })

  it('traceKeeps agrees with Cordis\' own trace on what it passes through unchanged', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    const event = session.append('turn/start', turnStart(1))
    const values: unknown[] = [undefined, null, 0, 'text', {}, Object.freeze({ a: 1 }), event, session, root, root.sessions, root.reflect, scoped(root, 'x'), () => {}]
    for (const value of values) expect(traceKeeps(value), String(value)).toBe(root.reflect.trace(value) === value)
    // The objects a session dispatches are all passed through.
    expect([event, session].map(traceKeeps)).toEqual([true, true])
    for (const value of [event, {}, root, root.sessions, root.reflect]) expect(eventTraceKeeps(value)).toBe(root.reflect.trace(value) === value)
  })
})

describe('the store\'s recording bind and another plugin\'s own', () => {
  const original = Symbol.for('cordis.original')
  const rawReflect = (root: Context) => (root.reflect as unknown as Record<symbol, { bind: Function }>)[original]!

  it('unloading the store leaves a bind another plugin put in its place', async () => {
    const root = new Context()
    const reflect = rawReflect(root)
    const fiber = root.plugin(Sessions)
    await fiber
    const before = reflect.bind
    const wrappedByOther: Function[] = []
    const other = function (this: unknown, callback: Function) {
      wrappedByOther.push(callback)
      return before.call(this, callback)
    }
    reflect.bind = other
    await fiber.dispose()
    expect(reflect.bind).toBe(other)
    const listener = () => {}
    root.on('custom/event' as never, listener)
    expect(wrappedByOther).toEqual([listener])
  })
})
