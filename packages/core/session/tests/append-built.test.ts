import { describe, expect, it } from 'vitest'
import { createUserMessage } from '@deepseek-ai/dsh-llm'
import { appendBuilt, SessionError, type Session } from '@deepseek-ai/dsh-session'
import { setup, typesOf } from './helpers'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    /** A merged type whose projector tries to append (refused). */
    'built-test/appending': { text: string }
  }
}

/** What a write throws, as `{ name, code, message }`, or `undefined` when it does not throw. */
function refusal(write: () => unknown): { name: string; code: string; message: string } | undefined {
  try {
    write()
    return undefined
  } catch (error) {
    return { name: (error as SessionError).name, code: (error as SessionError).code, message: (error as SessionError).message }
  }
}

describe('appendBuilt: event data a driver built from admitted, frozen values (issue 18)', () => {
  it('commits, freezes what was not frozen, projects and publishes like append', async () => {
    const root = await setup()
    const session = root.sessions.create('a')
    const published: string[] = []
    root.on('session/event', (_session, event) => void published.push(event.type))
    const message = createUserMessage('hello')
    appendBuilt(session, 'turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    appendBuilt(session, 'step/start', { turn: 1, step: 1 })
    const event = appendBuilt(session, 'user/message', { message, envelope: { display: [...message.content], contexts: [{ label: 'ctx' }] } })
    expect(typesOf(session)).toEqual(['session/meta', 'turn/start', 'step/start', 'user/message'])
    expect(published).toEqual(['turn/start', 'step/start', 'user/message'])
    expect([Object.isFrozen(event), Object.isFrozen(event.data), Object.isFrozen(event.data.envelope), Object.isFrozen(event.data.envelope!.contexts[0])]).toEqual([
      true,
      true,
      true,
      true,
    ])
    expect(session.deriveMessages()).toEqual([message])
  })

  it('logs envelopes that are frozen plain objects { type, seq, time, data }, whichever way the event came in', async () => {
    const root = await setup()
    const session = root.sessions.create('a')
    const built = appendBuilt(session, 'turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    appendBuilt(session, 'step/start', { turn: 1, step: 1 })
    // A chunk as the listeners get it, and as a later read rebuilds it once it is packed.
    const chunk = session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } })
    const packed = session.events[chunk.seq]!
    appendBuilt(session, 'step/end', { turn: 1, step: 1 })
    const checked = session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    const events = [session.events[0]!, built, chunk, packed, checked]
    expect(events.map((event) => [Object.getPrototypeOf(event) === Object.prototype, Object.keys(event), Object.isFrozen(event)])).toEqual(
      events.map(() => [true, ['type', 'seq', 'time', 'data'], true]),
    )
    expect(packed).not.toBe(chunk)
    expect([built, chunk, packed, checked]).toStrictEqual([
      { type: 'turn/start', seq: 1, time: built.time, data: { turn: 1, trigger: { kind: 'prompt' } } },
      { type: 'assistant/chunk', seq: 3, time: chunk.time, data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } } },
      { type: 'assistant/chunk', seq: 3, time: chunk.time, data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } } },
      { type: 'turn/end', seq: 5, time: checked.time, data: { turn: 1, reason: { kind: 'completed' } } },
    ])
    expect(JSON.parse(JSON.stringify(built))).toEqual(built)
  })

  it('keeps the structure check: an out-of-order event is refused with the error append gives, and the log is unchanged', async () => {
    const root = await setup()
    const session = root.sessions.create('a')
    const built = refusal(() => appendBuilt(session, 'step/start', { turn: 1, step: 1 }))
    const plain = refusal(() => session.append('step/start', { turn: 1, step: 1 }))
    expect(built).toEqual(plain)
    expect(built).toMatchObject({ name: 'SessionError' })
    expect(typesOf(session)).toEqual(['session/meta'])
  })

  it('refuses data that is not a plain object, and an append from inside a projector, as append does, and the log is unchanged', async () => {
    const root = await setup()
    const session = root.sessions.create('a')
    appendBuilt(session, 'turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    const refusals = [null, [], 'text'].map((data) => [
      refusal(() => appendBuilt(session, 'step/start', data as never)),
      refusal(() => session.append('step/start', data as never)),
    ])
    const inner: unknown[] = []
    root.sessions.projector('built-test/appending', (_event, log) => {
      inner.push(refusal(() => appendBuilt(log, 'todo/write', { todos: [] })), refusal(() => log.append('todo/write', { todos: [] })))
      return undefined
    })
    session.append('built-test/appending', { text: 'x' })
    expect(refusals.map(([built, plain]) => [built, built?.message === plain?.message && built?.code === plain?.code])).toEqual([
      [{ name: 'SessionError', code: 'INVALID_EVENT', message: 'step/start data must be a plain object' }, true],
      [{ name: 'SessionError', code: 'INVALID_EVENT', message: 'step/start data must be a plain object' }, true],
      [{ name: 'SessionError', code: 'INVALID_EVENT', message: 'step/start data must be a plain object' }, true],
    ])
    const reentrant = { name: 'SessionError', code: 'REENTRANT_APPEND', message: 'a projector of session "a" tried to append todo/write: projectors must not append' }
    expect(inner).toEqual([reentrant, reentrant])
    expect(typesOf(session)).toEqual(['session/meta', 'turn/start', 'built-test/appending'])
  })

  it('goes through a wrapped append (a refusing test log, an instrumentation), and through append for a session of another implementation', async () => {
    const root = await setup()
    const session = root.sessions.create('a')
    const seen: string[] = []
    const original = session.append.bind(session)
    ;(session as { append: Session['append'] }).append = ((type: string, data: never) => {
      seen.push(type)
      return original(type as never, data)
    }) as Session['append']
    appendBuilt(session, 'turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    const foreign = { append: (type: string) => ({ type, seq: 0, time: 0, data: {} }) } as unknown as Session
    const other = appendBuilt(foreign, 'turn/end', { turn: 1, reason: { kind: 'completed' } })
    expect([seen, other.type]).toEqual([['turn/start'], 'turn/end'])
  })
})
