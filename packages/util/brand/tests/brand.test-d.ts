import { describe, expectTypeOf, it } from 'vitest'
import type { Branded, BrandOf } from '@deepseek-ai/dsh-brand'

type SessionId = Branded<'SessionId'>
type CallId = Branded<'CallId'>

declare const session: SessionId
declare const call: CallId

describe('Branded', () => {
  it('two brands do not mix', () => {
    expectTypeOf<SessionId>().not.toEqualTypeOf<CallId>()
    expectTypeOf(session).not.toMatchTypeOf<CallId>()
    // @ts-expect-error a CallId is not a SessionId
    const wrong: SessionId = call
    void wrong
  })

  it('a bare string is not branded', () => {
    expectTypeOf<string>().not.toMatchTypeOf<SessionId>()
    // @ts-expect-error a plain string needs its owner's factory to become an id
    const wrong: SessionId = 'raw'
    void wrong
  })

  it('a branded value is still a string', () => {
    expectTypeOf(session).toMatchTypeOf<string>()
    expectTypeOf(session.length).toEqualTypeOf<number>()
    const key: string = session
    void key
  })

  it('exposes the brand name', () => {
    expectTypeOf<BrandOf<SessionId>>().toEqualTypeOf<'SessionId'>()
    expectTypeOf<BrandOf<string>>().toEqualTypeOf<never>()
  })
})
