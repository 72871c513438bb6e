import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import PostgresSessionPersistence from '@deepseek-ai/dsh-session-postgres'

describe('config', () => {
  it('refuses a flushIntervalMs longer than a Node timer holds (2^31 − 1 ms: a longer one fires after 1 ms, a write per event), before connecting', async () => {
    const root = new Context()
    // Nothing listens there: the config is refused before any connection is tried.
    const error = await Promise.resolve(root.plugin(PostgresSessionPersistence, { url: 'postgres://dsh@127.0.0.1:9/none', flushIntervalMs: 2 ** 31 })).then(
      () => undefined,
      (failure: unknown) => failure,
    )
    expect(String((error as Error | undefined)?.message)).toContain('flushIntervalMs expected number <= 2147483647 but got 2147483648')
    expect(root.get('sessionPersistence')).toBeUndefined()
  })
})
