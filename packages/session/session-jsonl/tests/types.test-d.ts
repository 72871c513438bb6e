import { Context } from 'cordis'
import { describe, expectTypeOf, it } from 'vitest'
import type { SessionPersistence } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence, { JsonlPersistenceError, type JsonlErrorCode } from '@deepseek-ai/dsh-session-jsonl'

describe('public types', () => {
  it('the plugin provides ctx.sessionPersistence, a SessionPersistence', () => {
    expectTypeOf<JsonlSessionPersistence>().toMatchTypeOf<SessionPersistence>()
    expectTypeOf<Context['sessionPersistence']>().toEqualTypeOf<SessionPersistence>()
  })

  it('its config is { directory, flushIntervalMs? }', () => {
    expectTypeOf<JsonlSessionPersistence.Config>().toEqualTypeOf<{ directory: string; flushIntervalMs?: number }>()
    const root = new Context()
    root.plugin(JsonlSessionPersistence, { directory: '~/.dsh/sessions' })
    // @ts-expect-error the directory is required
    root.plugin(JsonlSessionPersistence, { flushIntervalMs: 10 })
  })

  it('errors carry a code from a closed set, and where they point', () => {
    expectTypeOf<JsonlPersistenceError['code']>().toEqualTypeOf<JsonlErrorCode>()
    expectTypeOf<'SESSION_LOCKED'>().toMatchTypeOf<JsonlErrorCode>()
    expectTypeOf<JsonlPersistenceError['file']>().toEqualTypeOf<string | undefined>()
    expectTypeOf<JsonlPersistenceError['line']>().toEqualTypeOf<number | undefined>()
  })
})
