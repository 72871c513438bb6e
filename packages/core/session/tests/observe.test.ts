import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { scoped } from '@deepseek-ai/dsh-scope'
import Sessions, { observeSessions, SessionError, SessionId, type AnySessionEvent, type Session } from '@deepseek-ai/dsh-session'
import { captureLogs, setup } from './helpers'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    'observe-test/echo': { depth: number }
  }
}

const turnStart = (turn: number) => ({ turn, trigger: { kind: 'prompt' as const } })

describe('ctx.sessions.observe: session/event without the tracing wrapper', () => {
  it('receives every committed event of a live session, after commit, in seq order', async () => {
    const root = await setup()
    const seen: Array<[Session, AnySessionEvent, boolean]> = []
    root.sessions.observe((session, event) => void seen.push([session, event, session.events[event.seq] === event]))
    const session = root.sessions.create(SessionId('s'))
    const first = session.append('turn/start', turnStart(1))
    const second = session.append('step/start', { turn: 1, step: 1 })
    expect(seen).toEqual([
      [session, first, true],
      [session, second, true],
    ])
  })

  it('is called in registration order among the ctx.on listeners of the same dispatch', async () => {
    const root = await setup()
    const calls: string[] = []
    root.on('session/event', (_session, event) => void calls.push(`on-1:${event.seq}`))
    root.sessions.observe((_session, event) => void calls.push(`observe:${event.seq}`))
    root.on('session/event', (_session, event) => void calls.push(`on-2:${event.seq}`))
    const session = root.sessions.create(SessionId('s'))
    session.append('turn/start', turnStart(1))
    expect(calls).toEqual(['on-1:1', 'observe:1', 'on-2:1'])
  })

  it('sees an append made by a listener only after the current event reached every listener', async () => {
    const root = await setup()
    root.sessions.registerType('observe-test/echo')
    const seen: string[] = []
    root.sessions.observe((session, event) => {
      seen.push(`observer:${event.seq}`)
      if (event.type === 'observe-test/echo' && event.data.depth < 1) session.append('observe-test/echo', { depth: 1 })
    })
    root.on('session/event', (_session, event) => void seen.push(`listener:${event.seq}`))
    root.sessions.create(SessionId('s')).append('observe-test/echo', { depth: 0 })
    expect(seen).toEqual(['observer:1', 'listener:1', 'observer:2', 'listener:2'])
  })

  it('contains failures: a throwing or rejecting observer is logged and never fails the append', async () => {
    const root = await setup()
    const logs = captureLogs(root)
    const calls: string[] = []
    root.sessions.observe(() => {
      calls.push('thrower')
      throw new Error('observer broke')
    })
    root.sessions.observe(async () => {
      calls.push('rejecter')
      throw new Error('observer rejected')
    })
    root.sessions.observe((_session, event) => void calls.push(`after:${event.type}`))
    const session = root.sessions.create(SessionId('s'))
    const event = session.append('turn/start', turnStart(1))
    expect(session.events[1]).toBe(event)
    expect(calls).toEqual(['thrower', 'rejecter', 'after:turn/start'])
    await new Promise((resolve) => setImmediate(resolve))
    expect(logs).toEqual([
      expect.stringMatching(/a session\/event listener failed \(session s\): Error: observer broke/),
      expect.stringMatching(/a session\/event listener failed \(session s\): Error: observer rejected/),
    ])
  })

  it('reverts with the fiber of the context that registered it, and early through the returned function', async () => {
    const root = await setup()
    const seen: string[] = []
    let stop!: () => void
    const plugin = root.plugin({
      inject: ['sessions'],
      apply: (ctx: Context) => {
        ctx.sessions.observe((_session, event) => void seen.push(`plugin:${event.seq}`))
        stop = ctx.sessions.observe((_session, event) => void seen.push(`early:${event.seq}`))
      },
    })
    await plugin
    const session = root.sessions.create(SessionId('s'))
    session.append('turn/start', turnStart(1))
    stop()
    stop()
    session.append('step/start', { turn: 1, step: 1 })
    await plugin.dispose()
    session.append('step/end', { turn: 1, step: 1 })
    expect(seen).toEqual(['plugin:1', 'early:1', 'plugin:2'])
  })

  it('from an agent-scoped context observes only that agent session, unless { global: true }', async () => {
    const root = await setup()
    const seen: string[] = []
    scoped(root, 'a').sessions.observe((session, event) => void seen.push(`scoped:${session.id}:${event.seq}`))
    scoped(root, 'a').sessions.observe((session, event) => void seen.push(`global:${session.id}:${event.seq}`), { global: true })
    root.sessions.create(SessionId('a')).append('turn/start', turnStart(1))
    root.sessions.create(SessionId('b')).append('turn/start', turnStart(1))
    expect(seen).toEqual(['scoped:a:1', 'global:a:1', 'global:b:1'])
  })

  it('observes nothing of a private session until it is entered', async () => {
    const root = await setup()
    const seen: number[] = []
    root.sessions.observe((_session, event) => void seen.push(event.seq))
    const session = root.sessions.prepare(SessionId('s'))
    session.append('turn/start', turnStart(1))
    root.sessions.enter(session)
    session.append('step/start', { turn: 1, step: 1 })
    expect(seen).toEqual([2])
  })

  it('observeSessions registers before the store exists (what a persistence backend does) and works once it is mounted', async () => {
    const root = new Context()
    const seen: string[] = []
    observeSessions(root, (session, event) => void seen.push(`${session.id}:${event.type}`))
    await root.plugin(Sessions)
    root.sessions.create(SessionId('s')).append('turn/start', turnStart(1))
    expect(seen).toEqual(['s:turn/start'])
  })

  it('refuses something that is not a function with INVALID_ARGUMENT', async () => {
    const root = await setup()
    expect(() => root.sessions.observe('listener' as never)).toThrow(SessionError)
    expect(() => root.sessions.observe(undefined as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
  })
})
