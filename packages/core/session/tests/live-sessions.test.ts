import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Sessions, {
  persistLiveSessions,
  SessionError,
  WriteBehind,
  type AnySessionEvent,
  type LiveSessionBackend,
  type LiveWriter,
  type Session,
} from '@deepseek-ai/dsh-session'
import { closedTurn, openTurn } from './helpers'

/**
 * A second persistence backend in a few lines, to show what `WriteBehind` and
 * `persistLiveSessions` leave to a backend: an array per session as storage
 * (written events, then `stored` once synced) and a writer around a
 * `WriteBehind`. `stored` survives the plugin, like a disk.
 */
function arrayBackend(stored = new Map<string, AnySessionEvent[]>()) {
  const warnings: unknown[] = []
  const refusing = new Set<string>()
  class ArrayWriter implements LiveWriter {
    private readonly queue: AnySessionEvent[] = []
    private readonly written: AnySessionEvent[] = []
    readonly behind: WriteBehind<AnySessionEvent[]>
    constructor(readonly id: string) {
      const durable = stored.get(id) ?? []
      stored.set(id, durable)
      const queue = this.queue
      this.behind = new WriteBehind({
        queue: { get length() { return queue.length }, take: () => queue.splice(0), clear: () => void (queue.length = 0) },
        storage: {
          write: async (batch) => void this.written.push(...batch),
          sync: async () => void durable.push(...this.written.splice(0)),
          close: async () => {},
        },
        persisted: durable.length,
        intervalMs: 60_000,
        batchSize: 1000,
        failure: (error) => error as Error,
      })
    }
    get nextSeq() {
      return this.behind.nextSeq
    }
    get failed() {
      return this.behind.failed
    }
    enqueue(event: AnySessionEvent) {
      if (this.behind.failed) return
      this.queue.push(JSON.parse(JSON.stringify(event)))
      this.behind.queued()
    }
    flush() {
      return this.behind.flush()
    }
  }
  const open = new Set<ArrayWriter>()
  const backend: LiveSessionBackend<ArrayWriter> = {
    name: 'array-backend',
    open(session: Session) {
      if (refusing.has(session.id)) throw new Error(`cannot store "${session.id}"`)
      const writer = new ArrayWriter(session.id)
      open.add(writer)
      return writer
    },
    close: async (writer) => {
      open.delete(writer)
      await writer.behind.close()
    },
    drop: async (writer, reason) => {
      open.delete(writer)
      await writer.behind.discard(new Error(reason))
    },
    closeAll: async () => {
      await Promise.all([...open].map((writer) => writer.behind.close()))
      open.clear()
    },
    refusal: (session, cause) => new SessionError('INVALID_ARGUMENT', `array-backend refused "${session.id}"`, { cause }),
    warn: (error) => void warnings.push(error),
  }
  const plugin = { name: 'array-persistence', apply: (ctx: Context) => void persistLiveSessions(ctx, backend) }
  return { plugin, stored, warnings, refusing }
}

async function app() {
  const root = new Context()
  await root.plugin(Sessions)
  return root
}

const plain = (events: readonly AnySessionEvent[]) => JSON.parse(JSON.stringify(events)) as AnySessionEvent[]

describe('persistLiveSessions (dsh-session): the live wiring every backend shares', () => {
  it('writes behind from session/created and session/event; a flush makes everything before it durable', async () => {
    const root = await app()
    const { plugin, stored } = arrayBackend()
    await root.plugin(plugin)
    const session = root.sessions.create('a')
    closedTurn(session, 1)
    expect(stored.get('a')).toEqual([])
    await root.sessions.flush(session)
    expect(stored.get('a')).toEqual(plain(session.events))
  })

  it('takes on a session created before the backend was mounted, from its first event', async () => {
    const root = await app()
    const session = root.sessions.create('early')
    closedTurn(session, 1)
    const { plugin, stored } = arrayBackend()
    await root.plugin(plugin)
    await root.sessions.flush(session)
    expect(stored.get('early')).toEqual(plain(session.events))
  })

  it('a session it cannot take on is vetoed at creation; one it meets later is refused once: warned, and its flushes reject', async () => {
    const root = await app()
    const late = root.sessions.create('late')
    const { plugin, warnings, refusing } = arrayBackend()
    refusing.add('vetoed').add('late')
    await root.plugin(plugin)
    expect(() => root.sessions.create('vetoed')).toThrow('cannot store "vetoed"')
    expect(root.sessions.get('vetoed')).toBeUndefined()
    closedTurn(late, 1)
    const error = (await root.sessions.flush(late).catch((caught) => caught)) as SessionError
    expect(error).toMatchObject({ code: 'FLUSH_FAILED', cause: { message: 'array-backend refused "late"' } })
    expect(warnings).toEqual([error.cause])
  })

  it('a rolled-back publication (a later session/created listener vetoes) stores nothing of the session', async () => {
    const root = await app()
    const { plugin, stored } = arrayBackend()
    await root.plugin(plugin)
    root.on('session/created', (session) => {
      if (session.id === 'rolled-back') throw new Error('no')
    })
    expect(() => root.sessions.create('rolled-back')).toThrow('no')
    await new Promise((resolve) => setImmediate(resolve))
    expect(stored.get('rolled-back')).toEqual([])
  })

  it('unplugged alone: the live sessions it wrote flush with PERSISTENCE_DETACHED (nothing silent); plugged again, they are taken on where it stopped', async () => {
    const root = await app()
    const backend = arrayBackend()
    const fiber = root.plugin(backend.plugin)
    await fiber
    const session = root.sessions.create('s')
    closedTurn(session, 1)
    await fiber.dispose() // drains what was queued
    expect(backend.stored.get('s')).toEqual(plain(session.events))
    closedTurn(session, 2)
    const error = (await root.sessions.flush(session).catch((caught) => caught)) as SessionError
    expect(error).toBeInstanceOf(SessionError)
    expect(error).toMatchObject({ code: 'PERSISTENCE_DETACHED' })
    expect(error.message).toContain('session "s" is no longer persisted: array-backend stopped writing it')
    // Sessions no backend ever wrote have nothing to say.
    const never = root.sessions.create('never')
    await root.sessions.flush(never)

    // The same storage, plugged in again: it takes the session on at the flush and continues it.
    const again = arrayBackend(backend.stored)
    await root.plugin(again.plugin)
    await root.sessions.flush(session)
    expect(backend.stored.get('s')).toEqual(plain(session.events))
  })

  it('disposing the whole app keeps the tail a session appends while its owner settles (the shutdown waits for the sessions)', async () => {
    const root = await app()
    const { plugin, stored } = arrayBackend()
    await root.plugin(plugin)
    // An owner that settles its session during the teardown, like the agent loop: appends, flushes, detaches.
    let detach!: () => void
    const session = root.sessions.prepare('settling')
    root.plugin({
      name: 'owner',
      apply: (ctx: Context) => {
        detach = ctx.sessions.enter(session)
        openTurn(session, 1)
        ctx.effect(() => async () => {
          await Promise.resolve()
          session.append('turn/end', { turn: 1, reason: { kind: 'aborted' } })
          await ctx.sessions.flush(session)
          detach()
        })
      },
      inject: ['sessions'],
    })
    await new Promise((resolve) => setImmediate(resolve))
    await root.fiber.dispose()
    expect(stored.get('settling')).toEqual(plain(session.events))
    expect(session.events.at(-1)?.type).toBe('turn/end')
  })
})
