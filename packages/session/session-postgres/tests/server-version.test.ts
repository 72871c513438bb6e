import { describe, expect, it } from 'vitest'
import { requireServer } from '../src/server-version'

describe('the server version (checked on start)', () => {
  it('accepts PostgreSQL 14 and newer, and refuses older servers with UNSUPPORTED_SERVER naming both versions', () => {
    for (const version of [140000, 150018, 180001]) expect(() => requireServer(version)).not.toThrow()
    const refusal = (version: number) => {
      try {
        requireServer(version)
      } catch (error) {
        return { code: (error as { code: string }).code, message: (error as Error).message }
      }
      return undefined
    }
    expect([refusal(130011), refusal(90624)]).toEqual([
      { code: 'UNSUPPORTED_SERVER', message: 'The server is PostgreSQL 13; @deepseek-ai/dsh-session-postgres needs PostgreSQL 14 or newer. Nothing was changed.' },
      { code: 'UNSUPPORTED_SERVER', message: 'The server is PostgreSQL 9.6; @deepseek-ai/dsh-session-postgres needs PostgreSQL 14 or newer. Nothing was changed.' },
    ])
  })
})
