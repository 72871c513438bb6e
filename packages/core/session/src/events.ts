import type { Session } from './session'
import type { AnySessionEvent } from './types'

// Every session/* event is dispatched scope-filtered by the session's id: a
// listener registered in an agent's scoped context receives only the events
// of that agent's session; global listeners receive every session's.
declare module 'cordis' {
  interface Events {
    /**
     * A session was published by `ctx.sessions.enter` (or `create`, or the
     * `announce()` of an `enterUnannounced` entry): it is in `ctx.sessions`
     * and its appends now publish `session/event`. The session of an agent is
     * announced after both it and its agent were entered, so `ctx.agents`
     * already holds the agent here; `agent/created` follows. A step of the
     * publish transaction: a synchronous throw vetoes the publication, which
     * rolls back with a paired `session/disposed` and rethrows from `enter`; a
     * rejected promise is only logged. Persistence backends start writing the
     * session here, from `session.loadedLength`.
     * @mode emit
     */
    'session/created'(session: Session): void
    /**
     * A published session was detached (its id is free again). Once per
     * announced session, including a vetoed one. Listener failures are
     * contained and logged. Backends drain and release the session here.
     * @mode emit
     */
    'session/disposed'(session: Session): void
    /**
     * One event was committed to a live session's log, synchronously inside
     * `append`, after the data was validated, frozen and committed. Listeners
     * see events in seq order (an append made by a listener is published after
     * the current event has reached every listener). Listener failures are
     * contained and logged; they never fail the append (R-SES-1). Keep
     * listeners cheap: `assistant/chunk` events arrive at streaming speed.
     * @mode emit
     */
    'session/event'(session: Session, event: AnySessionEvent): void
    /**
     * The durability checkpoint (`ctx.sessions.flush`): every listener is
     * awaited, in parallel. A backend resolves once everything it received
     * for this session before the dispatch is durable; a rejection makes the
     * flush reject with `FLUSH_FAILED` (R-SES-5).
     * @mode parallel
     */
    'session/flush'(session: Session): void | Promise<void>
  }
}

export {}
