import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Sessions, { type AnySessionEvent, type Session } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'
import { sid, tempDir } from './helpers'

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as AnySessionEvent) : [])
const plain = (events: readonly AnySessionEvent[]) => JSON.parse(JSON.stringify(events)) as AnySessionEvent[]

function openTurn(session: Session, turn: number): void {
  session.append('turn/start', { turn, trigger: { kind: 'prompt' } })
  session.append('step/start', { turn, step: 1 })
}

function closeTurn(session: Session, turn: number): void {
  session.append('step/end', { turn, step: 1 })
  session.append('turn/end', { turn, reason: { kind: 'aborted' } })
}

/** Resolves after the event loop has turned `n` times (I/O included). */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
}

describe('disposing the app (an ancestor of the plugin, with the session store)', () => {
  it.each(['persistence first', 'store first'])(
    'keeps writing each live session until its owner disposes it, %s; then closes and lets go of the file',
    async (order) => {
      const dir = tempDir()
      const root = new Context()
      const mount = { persistence: () => root.plugin(JsonlSessionPersistence, { directory: dir, flushIntervalMs: 60_000 }), store: () => root.plugin(Sessions) }
      if (order === 'persistence first') {
        await mount.persistence()
        await mount.store()
      } else {
        await mount.store()
        await mount.persistence()
      }
      const sessions = root.sessions
      const session = sessions.prepare(sid('settling'))
      const detach = sessions.enter(session)
      openTurn(session, 1)
      await sessions.flush(session)

      let disposed = false
      const disposing = root.fiber.dispose().then(() => (disposed = true))
      // The owner is still settling its turn while the app unloads: its events and flushes keep
      // reaching the file, and the app's disposal waits for it.
      await turns(20)
      closeTurn(session, 1)
      await sessions.flush(session)
      expect(lines(join(dir, 'settling.jsonl'))).toEqual(plain(session.events))
      session.append('todo/write', { todos: [] }) // appended after the last flush: the close drains it
      await turns(20)
      expect(disposed).toBe(false)
      expect(existsSync(join(dir, 'settling.jsonl.lock'))).toBe(true)

      detach()
      await disposing
      expect(lines(join(dir, 'settling.jsonl'))).toEqual(plain(session.events))
      expect(existsSync(join(dir, 'settling.jsonl.lock'))).toBe(false)
    },
  )

  it('waits for the sessions of a bundle that holds both the store and the plugin (the CLI app shape)', async () => {
    const dir = tempDir()
    const root = new Context()
    let inner!: Context
    const app = root.plugin({
      name: 'app',
      async apply(ctx: Context) {
        await ctx.plugin(Sessions)
        await ctx.plugin(JsonlSessionPersistence, { directory: dir, flushIntervalMs: 60_000 })
        inner = ctx
      },
    })
    await app
    const sessions = inner.get('sessions')!
    const session = sessions.prepare(sid('bundled'))
    const detach = sessions.enter(session)
    openTurn(session, 1)

    let disposed = false
    const disposing = app.dispose().then(() => (disposed = true))
    await turns(20)
    closeTurn(session, 1)
    await sessions.flush(session)
    expect(lines(join(dir, 'bundled.jsonl'))).toEqual(plain(session.events))
    session.append('todo/write', { todos: [] })
    await turns(20)
    expect(disposed).toBe(false)
    detach()
    await disposing
    expect(lines(join(dir, 'bundled.jsonl'))).toEqual(plain(session.events))
    expect(existsSync(join(dir, 'bundled.jsonl.lock'))).toBe(false)
  })
})

describe('disposing the plugin without the session store', () => {
  it('closes at once when only a subtree holding the plugin unloads: the sessions live on, the store outside', async () => {
    const dir = tempDir()
    const root = new Context()
    await root.plugin(Sessions)
    const subtree = root.plugin({
      name: 'persistence-bundle',
      async apply(ctx: Context) {
        await ctx.plugin(JsonlSessionPersistence, { directory: dir, flushIntervalMs: 60_000 })
      },
    })
    await subtree
    const session = root.sessions.prepare(sid('outlives'))
    const detach = root.sessions.enter(session)
    openTurn(session, 1)
    // Resolves although the session stays live: waiting for it would never end.
    await subtree.dispose()
    expect(lines(join(dir, 'outlives.jsonl'))).toEqual(plain(session.events))
    expect(existsSync(join(dir, 'outlives.jsonl.lock'))).toBe(false)
    detach()
  })
})
