import type { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { setup } from './helpers'

/** Records session/created and session/disposed as `created <id>` / `disposed <id>`, with what `get` answers at that moment. */
function lifecycle(root: Context) {
  const log: string[] = []
  root.on('session/created', (s) => void log.push(`created ${s.id} (get: ${root.sessions.get(s.id) === s})`))
  root.on('session/disposed', (s) => void log.push(`disposed ${s.id} (get: ${root.sessions.get(s.id) === s})`))
  return log
}

describe('enterUnannounced: enter now, announce later (R-LIFE-1)', () => {
  it('is in get/list at once; session/created comes with announce(); detach emits the paired session/disposed', async () => {
    const root = await setup()
    const log = lifecycle(root)
    const session = root.sessions.prepare('s')
    const entry = root.sessions.enterUnannounced(session)
    expect([root.sessions.get('s'), root.sessions.list(), log]).toEqual([session, [session], []])
    entry.announce()
    entry.detach()
    entry.detach()
    expect(log).toEqual(['created s (get: true)', 'disposed s (get: false)'])
    expect(root.sessions.get('s')).toBeUndefined()
    expect(() => session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })).toThrow(expect.objectContaining({ code: 'DETACHED' }))
  })

  it('a detach before announce() removes the session silently and frees the id; announce() then refuses (DETACHED)', async () => {
    const root = await setup()
    const log = lifecycle(root)
    const entry = root.sessions.enterUnannounced(root.sessions.prepare('s'))
    entry.detach()
    expect(root.sessions.get('s')).toBeUndefined()
    expect(() => entry.announce()).toThrow(expect.objectContaining({ code: 'DETACHED' }))
    root.sessions.enter(root.sessions.prepare('s'))
    expect(log).toEqual(['created s (get: true)'])
  })

  it('a vetoing listener: announce() rethrows, the session stays entered until the caller detaches it, then session/disposed pairs the created', async () => {
    const root = await setup()
    const log = lifecycle(root)
    root.on('session/created', () => {
      throw new Error('veto')
    })
    const session = root.sessions.prepare('s')
    const entry = root.sessions.enterUnannounced(session)
    expect(() => entry.announce()).toThrow('veto')
    expect(root.sessions.get('s')).toBe(session)
    entry.detach()
    expect(log).toEqual(['created s (get: true)', 'disposed s (get: false)'])
    expect(() => entry.announce()).toThrow(expect.objectContaining({ code: 'DETACHED' }))
  })

  it('a detach asked by a created listener waits until the dispatch has unwound: every created listener runs first', async () => {
    const root = await setup()
    const log = lifecycle(root)
    let entry!: ReturnType<Context['sessions']['enterUnannounced']>
    root.on('session/created', () => {
      entry.detach()
      log.push('listener asked for the detach')
    })
    root.on('session/created', (s) => void log.push(`later listener (get: ${root.sessions.get(s.id) === s})`))
    entry = root.sessions.enterUnannounced(root.sessions.prepare('s'))
    entry.announce()
    expect(log).toEqual(['created s (get: true)', 'listener asked for the detach', 'later listener (get: true)', 'disposed s (get: false)'])
    expect(() => entry.announce()).toThrow(expect.objectContaining({ code: 'DETACHED' }))
  })

  it('refuses a live id (DUPLICATE_ID) and a session entered before (ALREADY_ENTERED); announce() runs once', async () => {
    const root = await setup()
    const first = root.sessions.prepare('s')
    const entry = root.sessions.enterUnannounced(first)
    expect(() => root.sessions.enterUnannounced(root.sessions.prepare('s'))).toThrow(expect.objectContaining({ code: 'DUPLICATE_ID' }))
    expect(() => root.sessions.enterUnannounced(first)).toThrow(expect.objectContaining({ code: 'ALREADY_ENTERED' }))
    entry.announce()
    expect(() => entry.announce()).toThrow(expect.objectContaining({ code: 'ALREADY_ENTERED' }))
  })
})
