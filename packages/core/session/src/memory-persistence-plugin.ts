import { persistLiveSessions } from './backend/persist-live-sessions'
import type { Context } from './cordis'
import { SessionError } from './errors'
import { liveBackend, MemorySessionPersistence } from './memory-persistence'
import type { SessionPersistence } from './persistence'

export interface MemoryPersistenceConfig {
  /** The backend to mount; a fresh one by default. Pass `previous.reopen()` to resume after a simulated crash. */
  backend?: MemorySessionPersistence
}

/** The holder name of the memory backend's claims (`ctx.sessions.claim`). */
const HOLDER = 'dsh-session-memory-persistence'

/**
 * Mounts a `MemorySessionPersistence` as `ctx.sessionPersistence` and wires it
 * to `ctx.sessions` with `persistLiveSessions`, the wiring of
 * dsh-session-jsonl and dsh-session-postgres, so it behaves as they do:
 *
 * - `session/created` opens the session's writer; a refusal vetoes the
 *   publication (`SESSION_EXISTS`, `SESSION_LOCKED`); a vetoed publication
 *   stores nothing;
 * - `session/event` queues the event (globally: sessions of agent-scoped
 *   contexts too), `session/flush` stores what is queued, `session/disposed`
 *   stores the rest and lets go of the session;
 * - unplugging the plugin alone stops persisting the live sessions: their
 *   flushes reject with `PERSISTENCE_DETACHED`; disposing the whole app
 *   keeps writing each live session until its owner disposes it.
 *
 * `delete` of a session that is live in `ctx.sessions` rejects with
 * `SESSION_LIVE`.
 */
export const memoryPersistence = {
  name: HOLDER,
  inject: ['sessions'],
  apply(ctx: Context, config: MemoryPersistenceConfig = {}) {
    const backend = config.backend ?? new MemorySessionPersistence()
    const logger = ctx.logger('session-memory')
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
    persistLiveSessions(
      ctx,
      backend[liveBackend](HOLDER, (error) => logger.warn(error)),
    )
  },
}
