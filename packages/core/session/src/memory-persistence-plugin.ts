import type { Context } from './cordis'
import { SessionError } from './errors'
import { MemorySessionPersistence } from './memory-persistence'
import type { SessionPersistence } from './persistence'
import type { Session } from './session'
import type { AnySessionEvent } from './types'

export interface MemoryPersistenceConfig {
  /** The backend to mount; a fresh one by default. Pass `previous.reopen()` to resume after a simulated crash. */
  backend?: MemorySessionPersistence
}

interface Tracked {
  /** The seq of the first event not handed to the backend yet. */
  next: number
}

/**
 * Mounts a `MemorySessionPersistence` as `ctx.sessionPersistence` and wires it
 * to `ctx.sessions` the way a real backend is wired:
 *
 * - `session/created` and `session/event`: hand the backend every event of the
 *   session it has not seen yet, starting at `session.loadedLength` (so a
 *   resumed session's loaded events are not written twice);
 * - `session/flush`: `flush` the backend (everything before is durable);
 * - `session/disposed`: flush and forget the session.
 *
 * `delete` of a session that is live in `ctx.sessions` rejects with
 * `SESSION_LIVE`.
 */
export const memoryPersistence = {
  name: 'dsh-session-memory-persistence',
  inject: ['sessions'],
  apply(ctx: Context, config: MemoryPersistenceConfig = {}) {
    const backend = config.backend ?? new MemorySessionPersistence()
    const tracked = new Map<Session, Tracked>()

    const handOver = (session: Session): Promise<void> => {
      let state = tracked.get(session)
      if (!state) tracked.set(session, (state = { next: session.loadedLength }))
      const { events } = session
      if (state.next >= events.length) return Promise.resolve()
      const batch: AnySessionEvent[] = events.slice(state.next)
      state.next = events.length
      return backend.append(session.id, batch)
    }

    const facade: SessionPersistence = {
      append: (id, events) => backend.append(id, events),
      flush: (id) => backend.flush(id),
      load: (id, options) => backend.load(id, options),
      list: () => backend.list(),
      exists: (id) => backend.exists(id),
      delete: async (id) => {
        if (ctx.sessions.get(id)) {
          throw new SessionError('SESSION_LIVE', `session "${id}" is live in this process; detach it before deleting it`)
        }
        return backend.delete(id)
      },
    }
    ctx.provide('sessionPersistence', facade)

    ctx.on('session/created', (session) => void handOver(session))
    ctx.on('session/event', (session) => void handOver(session))
    ctx.on('session/flush', async (session) => {
      await handOver(session)
      await backend.flush(session.id)
    })
    ctx.on('session/disposed', (session) => {
      const done = handOver(session).then(() => backend.flush(session.id))
      tracked.delete(session)
      return done
    })
  },
}
