import type { Context } from '../cordis'
import { observeSessions } from '../observers'
import type {} from '../events'
import type {} from '../service'
import { teardownTakesTheSessions } from './app-teardown'
import { LiveSessions, type ClaimSession, type LiveSessionBackend, type LiveWriter } from './live-sessions'

/**
 * Connects a persistence backend to every live session of `ctx.sessions`
 * (R-PER-1): the wiring dsh-session-jsonl uses, for any backend. Call it once
 * from the backend plugin, in the root context; it works whether or not
 * `ctx.sessions` is mounted yet.
 *
 * - `session/event` is observed without Cordis' per-call tracing
 *   (`observeSessions`), globally (also sessions of agent-scoped contexts);
 * - `session/created`, `session/flush` and `session/disposed` are global
 *   listeners, owned together with the shutdown by one effect: Cordis
 *   disposes an effect's parts in reverse, one after the other, so the
 *   listeners stay until the shutdown is done (`LiveSessions.shutdown`;
 *   separate effects would be disposed concurrently, and a session disposed
 *   meanwhile would never be closed). The observer may go first: `flush` and
 *   `detach` catch up on the events it did not see.
 * - The shutdown waits for the live sessions only when the teardown takes
 *   them too (`teardownTakesTheSessions`): disposing the whole app keeps the
 *   tail every settling session appends; unplugging the backend alone lets
 *   the sessions live on, unpersisted and saying so (`PERSISTENCE_DETACHED`).
 */
export function persistLiveSessions<W extends LiveWriter>(ctx: Context, backend: LiveSessionBackend<W>): LiveSessions<W> {
  const live = new LiveSessions(backend, () => claimOf(ctx))
  const global = { global: true }
  observeSessions(ctx, (session, event) => live.record(session, event), global)
  ctx.effect(function* () {
    yield ctx.on('session/created', (session) => live.attach(session), global)
    yield ctx.on('session/flush', (session) => live.flush(session), global)
    yield ctx.on('session/disposed', (session) => live.detach(session), global)
    yield () => live.shutdown(teardownTakesTheSessions(ctx))
  }, `${backend.name}: live sessions and shutdown`)
  return live
}

/** `ctx.sessions.claim`, when the store is mounted. */
function claimOf(ctx: Context): ClaimSession | undefined {
  const store = ctx.get('sessions')
  return store === undefined ? undefined : (session, holder) => store.claim(session, holder)
}
