import { expectTypeOf, test } from 'vitest'
import type { Context } from 'cordis'
import type { AnySessionEvent, Session, SessionEvent, SessionProjection } from '@deepseek-ai/dsh-session'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    'typetest/goal': { goal: string }
  }
}

test('a plugin merges an event type and appends it with its own data type', () => {
  const session = {} as Session
  expectTypeOf(session.append('typetest/goal', { goal: 'ship it' })).toEqualTypeOf<SessionEvent<'typetest/goal'>>()
  // @ts-expect-error the data must match the merged declaration
  session.append('typetest/goal', { goal: 1 })
  // @ts-expect-error a type nobody declared does not type-check
  session.append('typetest/undeclared', {})
})

test('AnySessionEvent narrows by type', () => {
  const event = {} as AnySessionEvent
  if (event.type === 'assistant/chunk') expectTypeOf(event.data.chunk.type).toEqualTypeOf<'text-delta' | 'reasoning-delta' | 'tool-call-delta' | 'redacted-reasoning-delta' | 'usage' | 'finish'>()
  if (event.type === 'typetest/goal') expectTypeOf(event.data.goal).toBeString()
})

test('ctx.sessions registers typed projectors and returns live sessions', () => {
  const ctx = {} as Context
  expectTypeOf(ctx.sessions.create('a')).toEqualTypeOf<Session>()
  expectTypeOf(ctx.sessions.enter({} as Session)).toEqualTypeOf<() => void>()
  ctx.sessions.projector('typetest/goal', (event, session) => {
    expectTypeOf(event.data.goal).toBeString()
    expectTypeOf(session).toEqualTypeOf<Session>()
    return { messages: [] } satisfies SessionProjection
  })
  ctx.sessions.registerType('typetest/goal', { ignorable: true })
  // @ts-expect-error only declared types can be registered
  ctx.sessions.registerType('typetest/undeclared')
})
