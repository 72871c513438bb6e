import { describe, expect, it } from 'vitest'
import { Context } from 'cordis'
import { scoped } from '@deepseek-ai/dsh-scope'
import { SessionError, SessionId, jsonDataProblem, type AnySessionEvent, type Session } from '@deepseek-ai/dsh-session'
import { captureLogs, expectRefused, openTurn, setup, typesOf, user } from './helpers'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    'test/echo': { depth: number }
    'test/blob': { value: unknown }
  }
}

describe('append (R-SES-1)', () => {
  it('assigns seq (the index in the log) and time, and returns the committed, frozen event', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    const before = Date.now()
    const event = session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    expect(event).toEqual({ type: 'turn/start', seq: 1, time: expect.any(Number), data: { turn: 1, trigger: { kind: 'prompt' } } })
    expect(event.time).toBeGreaterThanOrEqual(before)
    expect(session.events[1]).toBe(event)
    expect(Object.isFrozen(event)).toBe(true)
  })

  it('deep-freezes the data it was given, so no reader holds a mutable alias', async () => {
    const root = await setup()
    root.sessions.registerType('test/blob')
    const session = root.sessions.create(SessionId('s'))
    const value = { list: [{ a: 1 }, [2, { b: [3] }]], nested: { c: 'x' } }
    session.append('test/blob', { value })
    expect(Object.isFrozen(value)).toBe(true)
    expect(Object.isFrozen(value.list)).toBe(true)
    expect(Object.isFrozen(value.list[0])).toBe(true)
    expect(Object.isFrozen((value.list[1] as unknown[])[1])).toBe(true)
    expect(Object.isFrozen(value.nested)).toBe(true)
    expect(() => {
      ;(value.nested as { c: string }).c = 'changed'
    }).toThrow(TypeError)
    expect(session.events[1]!.data).toEqual({ value: { list: [{ a: 1 }, [2, { b: [3] }]], nested: { c: 'x' } } })
  })

  it('publishes session/event synchronously, after the event is committed', async () => {
    const root = await setup()
    const seen: Array<[Session, AnySessionEvent, boolean]> = []
    root.on('session/event', (session, event) => void seen.push([session, event, session.events[event.seq] === event]))
    const session = root.sessions.create(SessionId('s'))
    const event = session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    expect(seen).toEqual([[session, event, true]])
  })

  it('contains observer failures: a throwing or rejecting listener is logged and never fails the append', async () => {
    const root = await setup()
    const logs = captureLogs(root)
    const calls: string[] = []
    root.on('session/event', () => {
      calls.push('thrower')
      throw new Error('listener broke')
    })
    root.on('session/event', async () => {
      calls.push('rejecter')
      throw new Error('listener rejected')
    })
    root.on('session/event', (_session, event) => void calls.push(`observer:${event.type}`))
    const session = root.sessions.create(SessionId('s'))
    const event = session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    expect(session.events[1]).toBe(event)
    expect(calls).toEqual(['thrower', 'rejecter', 'observer:turn/start'])
    await new Promise((resolve) => setImmediate(resolve))
    expect(logs).toEqual([
      expect.stringMatching(/a session\/event listener failed \(session s\): Error: listener broke/),
      expect.stringMatching(/a session\/event listener failed \(session s\): Error: listener rejected/),
    ])
  })

  it('publishes an append made by a listener after the current event reached every listener (seq order)', async () => {
    const root = await setup()
    root.sessions.registerType('test/echo')
    const seen: string[] = []
    root.on('session/event', (session, event) => {
      seen.push(`first:${event.seq}`)
      if (event.type === 'test/echo' && event.data.depth < 2) session.append('test/echo', { depth: event.data.depth + 1 })
    })
    root.on('session/event', (_session, event) => void seen.push(`second:${event.seq}`))
    const session = root.sessions.create(SessionId('s'))
    session.append('test/echo', { depth: 0 })
    expect(seen).toEqual(['first:1', 'second:1', 'first:2', 'second:2', 'first:3', 'second:3'])
    expect(typesOf(session)).toEqual(['session/meta', 'test/echo', 'test/echo', 'test/echo'])
  })

  it('a private session publishes nothing until it is entered', async () => {
    const root = await setup()
    const seen: number[] = []
    root.on('session/event', (_session, event) => void seen.push(event.seq))
    const session = root.sessions.prepare(SessionId('s'))
    openTurn(session, 1)
    expect(seen).toEqual([])
    root.sessions.enter(session)
    session.append('step/start', { turn: 1, step: 1 })
    expect(seen).toEqual([3])
  })

  it('refuses appends to a detached session (DETACHED): they would never be persisted', async () => {
    const root = await setup()
    const session = root.sessions.prepare(SessionId('s'))
    const detach = root.sessions.enter(session)
    detach()
    expectRefused(session, 'turn/start', { turn: 1, trigger: { kind: 'prompt' } }, 'DETACHED', /session "s" was detached/)
  })

  it('refuses an unknown event type (UNKNOWN_TYPE) until a plugin registers it, and again once that plugin is gone', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    expectRefused(session, 'test/echo', { depth: 0 }, 'UNKNOWN_TYPE', /test\/echo is not a known event type: register it with ctx\.sessions\.registerType/)
    const plugin = root.plugin({ inject: ['sessions'], apply: (ctx: Context) => void ctx.sessions.registerType('test/echo') })
    await plugin
    session.append('test/echo', { depth: 0 })
    await plugin.dispose()
    expectRefused(session, 'test/echo', { depth: 1 }, 'UNKNOWN_TYPE')
    expect(typesOf(session)).toEqual(['session/meta', 'test/echo'])
  })

  it('registrations are global even from a scoped context, stack, and refuse built-in types', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    const undoOuter = scoped(root, 'agent-a').sessions.registerType('test/echo', { ignorable: false })
    const undoInner = root.sessions.registerType('test/echo', { ignorable: true })
    expect(root.sessions.typeInfo('test/echo')).toEqual({ type: 'test/echo', builtIn: false, ignorable: true, projected: false })
    expect(session.append('test/echo', { depth: 0 }).ignorable).toBe(true)
    undoInner()
    undoInner()
    expect(root.sessions.typeInfo('test/echo')).toEqual({ type: 'test/echo', builtIn: false, ignorable: false, projected: false })
    expect(session.append('test/echo', { depth: 1 })).not.toHaveProperty('ignorable')
    undoOuter()
    expect(root.sessions.typeInfo('test/echo')).toBeUndefined()
    expect(root.sessions.typeInfo('user/message')).toEqual({ type: 'user/message', builtIn: true, ignorable: false, projected: true })
    expect(() => root.sessions.registerType('user/message')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
  })
})

describe('lossless JSON (INVALID_EVENT names the path; the log and the data are left as they were)', () => {
  class Point {
    constructor(readonly x: number) {}
  }
  const cyclic: Record<string, unknown> = { name: 'loop' }
  cyclic.self = { back: cyclic }
  const cases: Array<[string, unknown, string, string]> = [
    ['undefined in an object', { a: undefined }, 'data.value.a', 'is undefined'],
    ['undefined in an array', [1, undefined], 'data.value[1]', 'is undefined'],
    ['an array hole', [1, , 3], 'data.value[1]', 'is undefined'],
    ['a function', { f: () => 1 }, 'data.value.f', 'is a function'],
    ['a symbol', { s: Symbol('s') }, 'data.value.s', 'is a symbol'],
    ['a bigint', { n: 10n }, 'data.value.n', 'is a bigint'],
    ['NaN', { n: Number.NaN }, 'data.value.n', 'is NaN'],
    ['Infinity', [[Number.POSITIVE_INFINITY]], 'data.value[0][0]', 'is Infinity'],
    ['a cycle', cyclic, 'data.value.self.back', 'refers back to an object that contains it (a cycle)'],
    ['a class instance', { p: new Point(1) }, 'data.value.p', 'is a Point instance, not a plain object'],
    ['a Date', { when: new Date(0) }, 'data.value.when', 'is a Date instance'],
    ['a Map', new Map(), 'data.value', 'is a Map instance'],
    ['an odd key', { 'my key': undefined }, 'data.value["my key"]', 'is undefined'],
  ]
  it.each(cases)('refuses %s', async (_name, value, path, reason) => {
    const root = await setup()
    root.sessions.registerType('test/blob')
    const session = root.sessions.create(SessionId('s'))
    const error = expectRefused(session, 'test/blob', { value }, 'INVALID_EVENT')
    expect(error.message).toContain(`test/blob ${path} ${reason}`)
    expect(error.path).toBe(path)
    if (typeof value === 'object' && value !== null) expect(Object.isFrozen(value)).toBe(false)
  })

  it.each(cases)('jsonDataProblem says what append would about %s, in the same words, and freezes nothing', async (_name, value, path, reason) => {
    const root = await setup()
    root.sessions.registerType('test/blob')
    const session = root.sessions.create(SessionId('s'))
    const said = jsonDataProblem({ value }, 'data')
    expect(said).toBe(`${path} ${expectRefused(session, 'test/blob', { value }, 'INVALID_EVENT').message.split(`test/blob ${path} `)[1]}`)
    expect(said).toContain(`${path} ${reason}`)
    if (typeof value === 'object' && value !== null) expect(Object.isFrozen(value)).toBe(false)
  })

  it('jsonDataProblem accepts what append accepts, without freezing it', () => {
    const shared = { k: 1 }
    const value = { a: shared, b: [shared, null, [[true]], -0, 'x'], bare: Object.assign(Object.create(null) as Record<string, unknown>, { x: 'y' }) }
    expect(jsonDataProblem(value)).toBeUndefined()
    expect(jsonDataProblem([{ type: 'text', text: 'ok' }], 'output')).toBeUndefined()
    expect(Object.isFrozen(value) || Object.isFrozen(shared)).toBe(false)
    expect(jsonDataProblem([{ type: 'text', text: 1n }], 'output')).toBe('output[0].text is a bigint, which JSON cannot represent (use a number or a string)')
  })

  it('refuses data that is not a plain object', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    expectRefused(session, 'turn/start', null as never, 'INVALID_EVENT', /turn\/start data must be a plain object/)
    expectRefused(session, 'turn/start', [] as never, 'INVALID_EVENT', /data must be a plain object/)
  })

  it('accepts shared sub-objects, null, nested arrays and null-prototype objects', async () => {
    const root = await setup()
    root.sessions.registerType('test/blob')
    const session = root.sessions.create(SessionId('s'))
    const shared = { k: 1 }
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { x: 'y' })
    const event = session.append('test/blob', { value: { a: shared, b: [shared, null, [[true]]], bare } })
    expect(JSON.parse(JSON.stringify(event.data))).toEqual({ value: { a: { k: 1 }, b: [{ k: 1 }, null, [[true]]], bare: { x: 'y' } } })
  })

  it('checks the shape of the built-in fields the log relies on', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    expectRefused(session, 'turn/start', { turn: 0, trigger: { kind: 'prompt' } }, 'INVALID_EVENT', /turn\/start: data\.turn must be an integer ≥ 1/)
    expectRefused(session, 'turn/start', { turn: 1 } as never, 'INVALID_EVENT', /data\.trigger must be an object/)
    openTurn(session, 1)
    expectRefused(session, 'user/message', { message: { ...user('x'), role: 'assistant' } } as never, 'INVALID_EVENT', /data\.message\.role must be 'user'/)
    expectRefused(session, 'user/message', { message: { ...user('x'), content: [{ type: 'text' }] } } as never, 'INVALID_EVENT', /data\.message\.content\[0\]\.text must be a string/)
    expectRefused(session, 'user/message', { message: 'x' } as never, 'INVALID_EVENT', /^user\/message: data\.message must be an object$/)
    expectRefused(session, 'user/message', { message: { ...user('x'), id: '' } } as never, 'INVALID_EVENT', /^user\/message: data\.message\.id must be a non-empty string$/)
    expectRefused(session, 'user/message', { message: { ...user('x'), content: {} } } as never, 'INVALID_EVENT', /^user\/message: data\.message\.content must be an array of content blocks$/)
    expectRefused(session, 'user/message', { message: { ...user('x'), source: [] } } as never, 'INVALID_EVENT', /^user\/message: data\.message\.source must be an object$/)
    expectRefused(session, 'user/message', { message: { ...user('x'), source: { kind: '' } } } as never, 'INVALID_EVENT', /^user\/message: data\.message\.source\.kind must be a non-empty string$/)
    const error = expectRefused(session, 'steering/message', { message: user('x'), envelope: { display: 'x' } } as never, 'INVALID_EVENT')
    expect(error).toMatchObject({ path: 'data.envelope.display', type: 'steering/message', seq: 3 })
    expect(error).toBeInstanceOf(SessionError)
  })

  it("turn/end{blocked}'s reason and an injected user/message's metadata are checked when present", async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    expectRefused(session, 'user/message', { message: user('x'), metadata: ['not', 'an object'] } as never, 'INVALID_EVENT', /user\/message: data\.metadata must be an object/)
    session.append('user/message', { message: user('x'), metadata: { origin: 'ide' } })
    expectRefused(session, 'turn/end', { turn: 1, reason: { kind: 'blocked', reason: 7 } } as never, 'INVALID_EVENT', /data\.reason\.reason must be a string/)
    session.append('turn/end', { turn: 1, reason: { kind: 'blocked', reason: 'policy' } })
    openTurn(session, 2)
    session.append('turn/end', { turn: 2, reason: { kind: 'blocked' } })
    expect([3, 4, 7].map((seq) => session.events[seq]!.data)).toEqual([
      { message: user('x'), metadata: { origin: 'ide' } },
      { turn: 1, reason: { kind: 'blocked', reason: 'policy' } },
      { turn: 2, reason: { kind: 'blocked' } },
    ])
  })

  it('request/header: the optional sampling settings are checked when present', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    session.append('step/start', { turn: 1, step: 1 })
    const header = { provider: 'p', model: 'm', system: '', tools: [], reason: 'initial' as const }
    expectRefused(session, 'request/header', { ...header, maxTokens: 0 }, 'INVALID_EVENT', /data\.maxTokens must be an integer ≥ 1/)
    expectRefused(session, 'request/header', { ...header, maxTokens: 1.5 }, 'INVALID_EVENT', /data\.maxTokens must be an integer ≥ 1/)
    expectRefused(session, 'request/header', { ...header, temperature: '0.2' as never }, 'INVALID_EVENT', /data\.temperature must be a number ≥ 0/)
    expectRefused(session, 'request/header', { ...header, temperature: -0.5 }, 'INVALID_EVENT', /data\.temperature must be a number ≥ 0/)
    expectRefused(session, 'request/header', { ...header, reasoningEffort: 3 as never }, 'INVALID_EVENT', /data\.reasoningEffort must be a string/)
    const logged = session.append('request/header', { ...header, reasoningEffort: 'high', maxTokens: 256, temperature: 0 })
    expect(logged.data).toEqual({ ...header, reasoningEffort: 'high', maxTokens: 256, temperature: 0 })
  })
})
